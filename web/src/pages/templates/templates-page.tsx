import { api } from '../../api/endpoints.js'
import type { TemplateInfo } from '../../api/types.js'
import { ErrorBox, Loading, TableWrap, useAsync } from '../../components/async.js'
import { Link, navigate } from '../../router.js'

/** The user's own templates (each opens its editor) and the built-ins, with their parameters' defaults. */
export function TemplatesPage() {
  // Read afresh on every visit, not from the forms' cache: this page is where uploads show up.
  const list = useAsync(() => api.templates(), [])
  const own = list.data?.filter((t) => t.custom) ?? []
  const builtIn = list.data?.filter((t) => !t.custom) ?? []
  return (
    <section>
      <div class="heading">
        <h1>Templates</h1>
        <button type="button" class="primary" onClick={() => navigate('/templates/new')} data-testid="new-template">
          New template
        </button>
      </div>
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? <Loading what="templates" /> : null}
      {list.data ? (
        <>
          <h2>Your templates</h2>
          {own.length > 0 ? (
            <TemplateTable templates={own} testid="own-templates" />
          ) : (
            <p class="muted" data-testid="no-own-templates">
              None yet. A template is a small JavaScript or TypeScript module; <Link href="/templates/new">write one</Link> from a working example.
            </p>
          )}
          <h2>Built in</h2>
          <TemplateTable templates={builtIn} testid="builtin-templates" />
        </>
      ) : null}
    </section>
  )
}

function TemplateTable({ templates, testid }: { templates: TemplateInfo[]; testid: string }) {
  return (
    <TableWrap>
      <table class="templates" data-testid={testid}>
        <thead>
          <tr>
            <th>Template</th>
            <th class="num">Version</th>
            <th>Multi-symbol</th>
            <th>Parameters (defaults)</th>
          </tr>
        </thead>
        <tbody>
          {templates.map((t) => (
            <tr key={t.id} data-template-id={t.id} data-custom={String(t.custom)} data-version={t.custom ? t.version : ''}>
              <td>
                {t.custom ? (
                  <>
                    <Link href={`/templates/${t.id}`}>{t.name}</Link> <code class="muted">{t.id}</code>
                    {t.description ? (
                      <>
                        <br />
                        <span class="muted">{t.description}</span>
                      </>
                    ) : null}
                  </>
                ) : (
                  <>
                    <code>{t.id}</code>
                    <br />
                    <span class="muted">{t.description}</span>
                  </>
                )}
              </td>
              <td class="num" data-label="Version">{t.custom ? `v${t.version}` : '—'}</td>
              <td data-label="Multi-symbol">{t.multi_symbol ? `yes (${t.min_symbols}–${t.max_symbols ?? '∞'})` : 'no'}</td>
              <td class="params-cell" data-label="Defaults" data-testid="template-params">
                {Object.entries(t.defaults).map(([name, value]) => (
                  <code key={name} data-param={name} data-default={JSON.stringify(value)}>
                    {name}={JSON.stringify(value)}
                  </code>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  )
}
