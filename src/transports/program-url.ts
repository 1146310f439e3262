/**
 * The URL of a rank program module as runThreads and runMpi take it: a URL, an absolute URL
 * string (file:, data: …), or a path relative to the current directory.
 */
export function programUrlOf(programModuleUrl: string | URL): string {
  if (programModuleUrl instanceof URL) return programModuleUrl.href;
  if (/^[a-z]+:/i.test(programModuleUrl)) return programModuleUrl;
  return new URL(programModuleUrl, `file://${process.cwd()}/`).href;
}
