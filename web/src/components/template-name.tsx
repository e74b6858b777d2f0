import { templateName, useTemplates } from './templates.js'

/** A template as lists and headers show it (templateName), its id on hover. */
export function TemplateName({ id, version }: { id: string; version?: number | null | undefined }) {
  const templates = useTemplates()
  return (
    <span title={id} data-template-id={id} data-testid="template-name">
      {templateName(templates.data, id, version)}
    </span>
  )
}
