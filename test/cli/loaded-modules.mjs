// Preloaded with NODE_OPTIONS=--import in a `perpetua` child: records the URL of every module the
// process resolves into LOADED_MODULES_FILE, so a test can say which packages a command loaded.
import { register } from 'node:module'

register('./loaded-modules-hooks.mjs', import.meta.url, { data: { file: process.env.LOADED_MODULES_FILE } })
