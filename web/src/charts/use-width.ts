import { useEffect, useRef, useState } from 'preact/hooks'

/**
 * The element's width in CSS pixels, following resizes. Our SVG charts draw in real pixels at that
 * width rather than scaling a fixed viewBox, so their text stays readable on a 390 px phone.
 */
export function useWidth<T extends HTMLElement>(): [{ current: T | null }, number] {
  const ref = useRef<T>(null)
  const [width, setWidth] = useState(0)
  useEffect(() => {
    const element = ref.current
    if (!element) return
    setWidth(element.clientWidth)
    const observer = new ResizeObserver(() => setWidth(element.clientWidth))
    observer.observe(element)
    return () => observer.disconnect()
  }, [])
  return [ref, width]
}
