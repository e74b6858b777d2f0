import type { CustomTemplate, CustomTemplateCreate, CustomTemplateUpdate, Template, TemplateDetail } from './operations.js'
import type { ApiClient } from './api-client.js'

export class TemplatesApi {
  constructor(private readonly client: ApiClient) {}

  /** The built-in templates, then your own at their latest versions (no source). */
  async list(): Promise<Template[]> {
    return (await this.client.get('/v1/templates')).data
  }
  /** A built-in template, or one of yours with its source and versions (`version`: an older one). */
  get(id: string, version?: number): Promise<TemplateDetail> {
    return this.client.get('/v1/templates/{id}', { path: { id }, query: { version } })
  }
  /** Uploads a strategy module as a new template (version 1); the sandbox checks it first. */
  create(template: CustomTemplateCreate): Promise<CustomTemplate> {
    return this.client.post('/v1/templates', { body: template })
  }
  /** Uploads a new version of one of your templates; name and description change with it when given. */
  update(id: string, upload: CustomTemplateUpdate): Promise<CustomTemplate> {
    return this.client.put('/v1/templates/{id}', { path: { id }, body: upload })
  }
  /** Deletes one of your templates (refused while a deployed strategy uses it). */
  delete(id: string): Promise<void> {
    return this.client.delete('/v1/templates/{id}', { path: { id } })
  }
}
