import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands'
import { javascript } from '@codemirror/lang-javascript'
import { bracketMatching, HighlightStyle, indentOnInput, syntaxHighlighting } from '@codemirror/language'
import { lintGutter, setDiagnostics } from '@codemirror/lint'
import { Compartment, EditorState } from '@codemirror/state'
import { drawSelection, EditorView, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from '@codemirror/view'
import { tags } from '@lezer/highlight'
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks'
import { diagnosticAt, type SourcePosition } from './source-position.js'

export type ModuleLanguage = 'javascript' | 'typescript'

/** The editor's container carries its view, for the browser tests (as charts carry their series). */
export interface EditorHost extends HTMLDivElement {
  editorView?: EditorView
}

/** A problem the server found in the module: its message, and where when it named a place. */
export interface SourceProblem {
  message: string
  at: SourcePosition | undefined
}

/**
 * Colours from the stylesheet's variables (styles.css, --code-*), so the code reads in the dashboard's
 * light and dark schemes alike: CodeMirror's default style is dark blue and purple on white only.
 */
const highlight = HighlightStyle.define([
  { tag: [tags.keyword, tags.modifier, tags.controlKeyword, tags.operatorKeyword], color: 'var(--code-keyword)' },
  { tag: [tags.string, tags.special(tags.string), tags.regexp], color: 'var(--code-string)' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: 'var(--code-number)' },
  { tag: [tags.comment, tags.lineComment, tags.blockComment], color: 'var(--muted)', fontStyle: 'italic' },
  { tag: [tags.definition(tags.variableName), tags.function(tags.definition(tags.variableName))], color: 'var(--code-definition)' },
  { tag: [tags.typeName, tags.className], color: 'var(--code-type)' },
  { tag: tags.propertyName, color: 'var(--code-property)' },
  { tag: tags.invalid, color: 'var(--loss)' },
])

const theme = EditorView.theme({
  '&': { backgroundColor: 'var(--panel)', color: 'var(--text)', height: '100%' },
  '.cm-content': { caretColor: 'var(--text)' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--text)' },
  '.cm-gutters': { backgroundColor: 'var(--bg)', color: 'var(--muted)', borderRight: '1px solid var(--line)' },
  '.cm-activeLine': { backgroundColor: 'color-mix(in srgb, var(--accent) 7%, transparent)' },
  '.cm-activeLineGutter': { backgroundColor: 'color-mix(in srgb, var(--accent) 14%, transparent)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection': { backgroundColor: 'color-mix(in srgb, var(--accent) 28%, transparent)' },
  '&.cm-focused .cm-matchingBracket': { backgroundColor: 'color-mix(in srgb, var(--gain) 25%, transparent)' },
  // The wavy underline alone is easy to miss under one character such as a stray ';'.
  '.cm-lintRange-error': { backgroundColor: 'color-mix(in srgb, var(--loss) 22%, transparent)' },
  '.cm-tooltip': { backgroundColor: 'var(--panel)', color: 'var(--text)', border: '1px solid var(--line)' },
})

/**
 * A CodeMirror 6 editor for a strategy module: JavaScript or TypeScript highlighting, undo history,
 * bracket matching, Tab to indent (Escape then Tab leaves the editor, CodeMirror's rule), and the
 * server's refusal drawn as a lint diagnostic at the line:column it named. `doc` is shown when the
 * editor starts and again whenever `revision` changes (a version loaded); typing reports through `onChange`.
 */
export function CodeEditor(props: {
  doc: string
  revision: number
  language: ModuleLanguage
  problem: SourceProblem | undefined
  onChange: (text: string) => void
  label: string
}) {
  const host = useRef<EditorHost>(null)
  const view = useRef<EditorView | undefined>(undefined)
  const languages = useRef(new Compartment())
  const onChange = useRef(props.onChange)
  onChange.current = props.onChange

  useEffect(() => {
    const editor = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: props.doc,
        extensions: [
          lineNumbers(),
          highlightActiveLineGutter(),
          lintGutter(),
          history(),
          drawSelection(),
          indentOnInput(),
          bracketMatching(),
          highlightActiveLine(),
          syntaxHighlighting(highlight),
          languages.current.of(javascript({ typescript: props.language === 'typescript' })),
          keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
          EditorState.tabSize.of(2),
          EditorView.contentAttributes.of({ 'aria-label': props.label }),
          theme,
          EditorView.updateListener.of((update) => {
            if (update.docChanged) onChange.current(update.state.doc.toString())
          }),
        ],
      }),
    })
    view.current = editor
    host.current!.editorView = editor
    return () => {
      editor.destroy()
      view.current = undefined
    }
  }, [])

  // A layout effect, so the opened version's text lands in the same commit as the rest of the page (the
  // version list's aria-current): never a frame, or a test's read, showing the old text beside the new marks.
  useLayoutEffect(() => {
    const editor = view.current
    if (!editor || editor.state.doc.toString() === props.doc) return
    editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: props.doc } })
  }, [props.revision])

  useEffect(() => {
    view.current?.dispatch({ effects: languages.current.reconfigure(javascript({ typescript: props.language === 'typescript' })) })
  }, [props.language])

  useEffect(() => {
    const editor = view.current
    if (!editor) return
    const { problem } = props
    const diagnostic = problem?.at ? diagnosticAt(editor.state.doc, problem.at, problem.message) : undefined
    editor.dispatch(setDiagnostics(editor.state, diagnostic ? [diagnostic] : []))
    if (diagnostic) editor.dispatch({ effects: EditorView.scrollIntoView(diagnostic.from, { y: 'center' }) })
  }, [props.problem])

  return <div class="code-editor" ref={host} data-testid="code-editor" data-language={props.language} />
}
