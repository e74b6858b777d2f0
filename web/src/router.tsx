import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { DASHBOARD_PATH } from '../../src/dashboard/address.js'

/** Where the server serves the dashboard, without the closing slash; every page path is below it. */
export const BASE = DASHBOARD_PATH.slice(0, -1)

const listeners = new Set<() => void>()

/** The current page path below BASE, e.g. `/backtests/bt_1a2b3c4d`. */
export function currentPath(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname
  return path === '' ? '/' : path
}

export function navigate(to: string, replace = false): void {
  const url = BASE + to
  if (replace) history.replaceState(null, '', url)
  else history.pushState(null, '', url)
  for (const listener of listeners) listener()
  window.scrollTo(0, 0)
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath)
  useEffect(() => {
    const update = () => setPath(currentPath())
    listeners.add(update)
    window.addEventListener('popstate', update)
    return () => {
      listeners.delete(update)
      window.removeEventListener('popstate', update)
    }
  }, [])
  return path
}

/** An in-app link: a real href (open in a new tab works), navigation without a reload on a plain click. */
export function Link(props: { href: string; children: ComponentChildren; class?: string; 'aria-current'?: 'page' | undefined }) {
  const { href, children, ...rest } = props
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    event.preventDefault()
    navigate(href)
  }
  return (
    <a {...rest} href={BASE + href} onClick={onClick}>
      {children}
    </a>
  )
}

/** Matches `/backtests/:id` style patterns; returns the named segments or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean)
  const got = path.split('/').filter(Boolean)
  if (want.length !== got.length) return null
  const params: Record<string, string> = {}
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!
    const g = decodeURIComponent(got[i]!)
    if (w.startsWith(':')) params[w.slice(1)] = g
    else if (w !== g) return null
  }
  return params
}
