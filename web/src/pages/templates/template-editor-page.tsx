import smaCrossExample from 'example:sma-cross'
import { useEffect, useState } from 'preact/hooks'
import { PerpetuaError } from '../../../../src/client/index.js'
import { api } from '../../api/endpoints.js'
import type { TemplateDetail } from '../../api/types.js'
import { ErrorBox, Loading, toError } from '../../components/async.js'
import { forgetTemplates } from '../../components/templates.js'
import type { ModuleLanguage, SourceProblem } from '../../editor/code-editor.js'
import { positionIn } from '../../editor/source-position.js'
import { time } from '../../format.js'
import { Link, navigate } from '../../router.js'
import { BacktestForm } from '../backtests/backtest-form.js'
import { SweepForm } from '../sweeps/sweep-form.js'

type CustomDetail = Extract<TemplateDetail, { custom: true }>
type EditorModule = typeof import('../../editor/code-editor.js')

/** CodeMirror, loaded when an editor page first opens (its own chunk: web/build.ts). */
let editorModule: Promise<EditorModule> | undefined
function useEditorModule(): { editor: EditorModule | undefined; error: Error | undefined } {
  const [editor, setEditor] = useState<EditorModule>()
  const [error, setError] = useState<Error>()
  useEffect(() => {
    editorModule ??= import('../../editor/code-editor.js')
    editorModule.then(setEditor, (failure: unknown) => {
      editorModule = undefined
      setError(toError(failure))
    })
  }, [])
  return { editor, error }
}

/** What Save would store: compared with the last saved version to tell unsaved changes. */
interface Draft {
  name: string
  description: string
  language: ModuleLanguage
  source: string
}

const draftOf = (detail: CustomDetail): Draft => ({ name: detail.name, description: detail.description ?? '', language: detail.language, source: detail.source })

/**
 * A strategy module in a code editor: a new template (`id` "new", starting from the SMA-cross example,
 * a module the tests run) or one of the user's, whose Save uploads a new version. A refusal shows the
 * server's message and marks the line:column it names in the editor. A saved template can be
 * backtested or swept from here and deleted (refused while a deployed strategy uses it).
 */
export function TemplateEditorPage({ id }: { id: string }) {
  const isNew = id === 'new'
  const [detail, setDetail] = useState<CustomDetail>()
  const [loadError, setLoadError] = useState<Error>()
  const [draft, setDraft] = useState<Draft>({ name: '', description: '', language: 'javascript', source: smaCrossExample })
  // What the editor shows when it starts and whenever `revision` moves (a version opened); typing only moves draft.source.
  const [shown, setShown] = useState({ doc: smaCrossExample, revision: 0 })
  /** The version whose text is in the editor; the latest unless an older one was opened. */
  const [viewing, setViewing] = useState<number>()
  const [saveError, setSaveError] = useState<Error>()
  const [problem, setProblem] = useState<SourceProblem>()
  const [busy, setBusy] = useState(false)
  /** The form open under the heading: a backtest or a sweep of the saved template. */
  const [trying, setTrying] = useState<'backtest' | 'sweep'>()
  const editor = useEditorModule()

  const show = (source: string) => setShown((previous) => ({ doc: source, revision: previous.revision + 1 }))
  const loaded = (next: CustomDetail) => {
    setDetail(next)
    setDraft(draftOf(next))
    setViewing(next.version)
    show(next.source)
  }

  useEffect(() => {
    if (isNew) return
    api.template(id).then(
      (found) => (found.custom ? loaded(found) : setLoadError(new Error(`${id} is a built-in template: it cannot be edited; backtest it from the Backtests page`))),
      (e: unknown) => setLoadError(toError(e)),
    )
  }, [id])

  const set = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }))
  const saved = detail ? draftOf(detail) : undefined
  const dirty = !saved || (Object.keys(draft) as (keyof Draft)[]).some((k) => draft[k] !== saved[k])

  const openVersion = async (version: number) => {
    setSaveError(undefined)
    setProblem(undefined)
    try {
      const old = await api.template(id, version)
      if (!old.custom) return
      set({ source: old.source, language: old.language })
      show(old.source)
      setViewing(version)
    } catch (failure) {
      setSaveError(toError(failure))
    }
  }

  const save = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setSaveError(undefined)
    setProblem(undefined)
    const description = draft.description.trim()
    try {
      if (isNew) {
        const created = await api.createTemplate({ name: draft.name.trim(), source: draft.source, language: draft.language, ...(description ? { description } : {}) })
        forgetTemplates()
        navigate(`/templates/${created.id}`, true)
        return
      }
      await api.updateTemplate(id, { source: draft.source, language: draft.language, name: draft.name.trim(), description: description || null })
      forgetTemplates()
      const latest = await api.template(id)
      if (latest.custom) loaded(latest)
    } catch (failure) {
      const error = toError(failure)
      setSaveError(error)
      if (failure instanceof PerpetuaError && failure.field === 'source') setProblem({ message: error.message, at: positionIn(error.message) })
    } finally {
      setBusy(false)
    }
  }

  if (loadError) {
    return (
      <section>
        <h1>Template</h1>
        <ErrorBox error={loadError} />
        <Link href="/templates">Back to the templates</Link>
      </section>
    )
  }
  if (!isNew && !detail) return <Loading what={id} />

  const latest = detail?.version
  const status = isNew
    ? 'Not saved yet: Save checks the module in the sandbox (a smoke run over recorded bars) and stores it as version 1.'
    : viewing !== latest
      ? `Showing version ${viewing} of ${latest}: Save stores it as version ${latest! + 1}.`
      : dirty
        ? `Unsaved changes to version ${latest}: Save stores them as version ${latest! + 1}.`
        : `Version ${latest}, saved ${time(detail!.updated_at)}.`

  return (
    <section data-testid="template-editor" data-template-id={isNew ? '' : id} data-version={latest ?? ''}>
      <div class="heading">
        <h1>{isNew ? 'New template' : detail!.name}</h1>
        {detail ? (
          <>
            <code class="muted">{detail.id}</code>
            <button type="button" onClick={() => setTrying((v) => (v === 'backtest' ? undefined : 'backtest'))} aria-expanded={trying === 'backtest'} data-testid="backtest-this">
              {trying === 'backtest' ? 'Close backtest' : 'Backtest this'}
            </button>
            <button type="button" onClick={() => setTrying((v) => (v === 'sweep' ? undefined : 'sweep'))} aria-expanded={trying === 'sweep'} data-testid="sweep-this">
              {trying === 'sweep' ? 'Close sweep' : 'Sweep this'}
            </button>
            <DeleteTemplate id={id} />
          </>
        ) : null}
      </div>
      {detail && trying === 'backtest' ? (
        <div data-testid="template-backtest">
          <p class="hint">
            Runs version {latest} as saved{dirty ? ' (not your unsaved changes)' : ''}, with its defaults.
          </p>
          <BacktestForm templateId={detail.id} />
        </div>
      ) : null}
      {detail && trying === 'sweep' ? (
        <div data-testid="template-sweep">
          <p class="hint">
            Sweeps version {latest} as saved{dirty ? ' (not your unsaved changes)' : ''}: pick the parameters to vary; the others keep their defaults.
          </p>
          <SweepForm templateId={detail.id} />
        </div>
      ) : null}
      <form class="card template-form" onSubmit={save} data-testid="template-form">
        <div class="form-grid">
          <label>
            Name
            <input name="name" required maxLength={100} value={draft.name} onInput={(e) => set({ name: e.currentTarget.value })} />
          </label>
          <label>
            Language
            <select name="language" value={draft.language} onChange={(e) => set({ language: e.currentTarget.value as ModuleLanguage })}>
              <option value="javascript">JavaScript</option>
              <option value="typescript">TypeScript (types stripped at upload)</option>
            </select>
          </label>
          <label class="wide">
            Description
            <textarea name="description" rows={2} maxLength={1000} value={draft.description} onInput={(e) => set({ description: e.currentTarget.value })} />
          </label>
        </div>
        <div class="toolbar">
          <button type="submit" class="primary" disabled={busy || !dirty || !draft.name.trim()} data-testid="template-save">
            {busy ? 'Checking…' : isNew ? 'Save' : 'Save new version'}
          </button>
          <span class="muted" data-testid="template-status" data-dirty={String(dirty)}>
            {status}
          </span>
        </div>
        {saveError ? (
          <p class="error" role="alert" data-testid="save-error" data-line={problem?.at?.line ?? ''} data-column={problem?.at?.column ?? ''}>
            {problem?.at ? <strong>Line {problem.at.line}{problem.at.column === undefined ? '' : `, column ${problem.at.column}`}: </strong> : null}
            {saveError.message}
          </p>
        ) : null}
        <ErrorBox error={editor.error} />
        {editor.editor ? (
          <editor.editor.CodeEditor
            doc={shown.doc}
            revision={shown.revision}
            language={draft.language}
            problem={problem}
            onChange={(source) => set({ source })}
            label="strategy module source"
          />
        ) : (
          <div class="code-editor">{editor.error ? null : <Loading what="the editor" />}</div>
        )}
      </form>
      {detail ? <Versions detail={detail} viewing={viewing} onOpen={openVersion} /> : <ContractHint />}
    </section>
  )
}

function Versions({ detail, viewing, onOpen }: { detail: CustomDetail; viewing: number | undefined; onOpen: (version: number) => void }) {
  return (
    <>
      <h2>Versions</h2>
      <ul class="versions" data-testid="versions">
        {[...detail.versions].reverse().map((v) => (
          <li key={v.version} data-version={v.version} aria-current={v.version === viewing ? 'true' : undefined}>
            <button type="button" class="link" onClick={() => onOpen(v.version)} disabled={v.version === viewing}>
              Version {v.version}
            </button>{' '}
            {v.version === detail.version ? <span class="badge active">latest</span> : null} <span class="muted">{time(v.created_at)}</span>{' '}
            <code class="muted sha" title="SHA-256 of the code the sandbox runs">{v.sha256.slice(0, 12)}</code>
          </li>
        ))}
      </ul>
      <p class="hint">Strategies and backtests keep the version they started with. Opening an older version puts its text in the editor; saving it makes it the latest.</p>
    </>
  )
}

function ContractHint() {
  return (
    <p class="hint">
      A module exports <code>params</code> (each with a type, a default and bounds), <code>warmup(p)</code>, <code>create(p, ctx)</code> returning{' '}
      <code>{'{ onBar(bar) }'}</code> (the target position as a fraction of equity in [−1, 1], NaN to keep it) and optionally <code>validate(p)</code>. It sees only
      closed bars, so it cannot look ahead.
    </p>
  )
}

/** Delete with a second click to confirm; the server's refusal (a deployed strategy uses it) is shown as it says it. */
function DeleteTemplate({ id }: { id: string }) {
  const [confirming, setConfirming] = useState(false)
  const [error, setError] = useState<Error>()
  const [busy, setBusy] = useState(false)
  const remove = async () => {
    setBusy(true)
    setError(undefined)
    try {
      await api.deleteTemplate(id)
      forgetTemplates()
      navigate('/templates')
    } catch (failure) {
      setError(toError(failure))
      setConfirming(false)
      setBusy(false)
    }
  }
  return (
    <>
      {confirming ? (
        <span class="confirm" data-testid="delete-confirm">
          Delete it for good?{' '}
          <button type="button" class="danger" disabled={busy} onClick={remove} data-testid="delete-template-yes">
            Delete
          </button>{' '}
          <button type="button" onClick={() => setConfirming(false)}>
            Keep
          </button>
        </span>
      ) : (
        <button type="button" onClick={() => setConfirming(true)} data-testid="delete-template">
          Delete
        </button>
      )}
      {error ? (
        <p class="error wide-row" role="alert" data-testid="delete-error">
          {error.message}
        </p>
      ) : null}
    </>
  )
}
