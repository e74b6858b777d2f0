import fs from 'node:fs'
import path from 'node:path'
import { type BrowserContext, chromium } from 'playwright-core'
import { tempDir } from '../support/database.js'

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it when missing); TEST_CHROMIUM names another. */
export const CHROMIUM = process.env.TEST_CHROMIUM ?? '/usr/bin/chromium'

/**
 * Why the browser tests cannot run here, or undefined when they can. Said once on stderr too, so a
 * local run without a browser tells what it skipped and why rather than passing quietly.
 */
export function browserMissing(): string | undefined {
  if (fs.existsSync(CHROMIUM)) return undefined
  const reason = `no Chromium at ${CHROMIUM}: the dashboard's browser tests (test/web) were skipped; install it with \`apt-get install -y chromium\` to run them`
  process.stderr.write(`SKIPPED ${reason}\n`)
  return reason
}

/**
 * Headless Chromium with a fresh profile and nothing that reaches beyond this machine: the
 * background-networking flags stop its calls to Google's hosts (refused on this closed network).
 */
export async function launchBrowser(): Promise<BrowserContext> {
  const profile = path.join(tempDir('chromium'), 'profile')
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
  })
}
