// node tests/js/read_queries.js < {"rules": ..., "queries": [...]}  ->  [{values}, ...] on stdout
// (tests/test_urlquery.py: the page's shell, static/urlquery.js, on the same URLs as the app)
const { readQuery } = require("../../static/urlquery.js");
let input = "";
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const { rules, queries } = JSON.parse(input);
  process.stdout.write(JSON.stringify(queries.map((q) => readQuery(q, rules).values)));
});
