// The page's configuration as the build writes it (buildsupport/site.py), reduced to what the loader's
// pure helpers read: the URL's rules of app/state/settings.py url_rules, the shell's texts.
export const cfg = {
  defaultLang: "es",
  inlineState: "es-cache-2",
  states: "assets/states-0123456789/",
  worker: "assets/worker.0123456789.js",
  pyodide: "pyodide/0.29.3/pyodide.js",
  indexURL: "pyodide/0.29.3/",
  stdlib: null,
  lock: "assets/pyodide-lock.0123456789.json",
  packageBaseUrl: "./",
  packages: ["numpy", "panel"],
  app: "assets/app.0123456789.zip",
  panelCdnRoot: "panel/",
  lazy: "assets/lazy-modules.0123456789.json",
  text: {
    es: { shell_title: "La caché", shell_snapshot: "Vista previa", shell_later: "t = {t}, semilla {seed}, top-p {top_p}" },
    en: { shell_title: "The cache" },
  },
  query: {
    params: {
      lang: { kind: "choice", choices: ["es", "en", "pt"], aliases: {}, default: "es" },
      mode: { kind: "choice", choices: ["cache", "full"], aliases: { sin: "full" }, default: "cache" },
      t: { kind: "int", bounds: [2, 64], default: null },
      seed: { kind: "int", bounds: [0, 1000], default: 7 },
      top_p: { kind: "float", bounds: [0.05, 1], default: 0.9 },
      speed: { kind: "float", bounds: [0.5, 20], default: 4 },
    },
  },
};

export const query = (values) => ({ lang: "es", mode: "cache", t: null, seed: 7, top_p: 0.9, speed: 4, ...values });
