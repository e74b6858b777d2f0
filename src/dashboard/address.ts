/**
 * Where `perpetua serve` serves the dashboard. Import-free, so the server, the build (web/build.ts)
 * and the app's router (web/src/router.tsx) share the one value. No spec path starts with /app.
 */
export const DASHBOARD_PATH = '/app/'
