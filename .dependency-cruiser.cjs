// The layering of src/ (docs/architecture.md, "The layers"), checked by `npm run lint`. The list of
// layers is read from that page, so the page and the check cannot drift apart.
const fs = require("node:fs");
const path = require("node:path");

/** The folders (or top-level files) of each layer, lowest first, from the page's marked list. */
function layers() {
  const page = fs.readFileSync(path.join(__dirname, "docs", "architecture.md"), "utf8");
  const list = /<!-- layers -->\n([\s\S]*?)<!-- \/layers -->/.exec(page);
  if (!list) throw new Error("docs/architecture.md: no <!-- layers --> list");
  return list[1]
    .split("\n")
    .map((line) => /^\d+\. (.+)$/.exec(line.trim()))
    .filter(Boolean)
    .map((match) => match[1].split(",").map((name) => name.trim()));
}

const literal = (name) => name.replace(/\./g, "\\.");
/** A module path of any of `names` (a folder of src/, or a file at its top). */
const under = (names) => `^src/(${names.map(literal).join("|")})(/|$)`;

/** What a command may import values from (docs/architecture.md); `service` also runs the simulator. */
const FLOOR = ["usecases", "checks", "report", "results", "errors", "render"];
/** The command runtime: loaded by every command and by --help, so it must not load the use cases. */
const RUNTIME = ["index", "lifecycle", "errors", "args", "flags"];

const all = layers();
const listed = all.flat();
const upward = all.slice(0, -1).map((names, i) => ({
  name: `layer-${i + 1}-imports-upward`,
  comment: `${names.join(", ")} (layer ${i + 1}) may import only folders of a lower layer (docs/architecture.md)`,
  severity: "error",
  from: { path: under(names) },
  to: { path: under(all.slice(i).flat()), pathNot: "^src/$1(/|$)" },
}));

module.exports = {
  forbidden: [
    ...upward,
    {
      name: "commands-import-only-the-floor",
      comment:
        "a command imports values only from usecases, checks, report, results, errors and render (types from anywhere): docs/architecture.md",
      severity: "error",
      from: { path: "^src/commands/", pathNot: `^src/commands/(${[...RUNTIME, "service"].join("|")})\\.ts$` },
      to: {
        path: "^src/[^/]+/",
        pathNot: `^src/(commands|${FLOOR.join("|")})/`,
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "service-runs-only-the-simulator",
      comment: "`agent-iac service` runs the simulator, which is all it does: docs/architecture.md",
      severity: "error",
      from: { path: "^src/commands/service\\.ts$" },
      to: {
        path: "^src/[^/]+/",
        pathNot: `^src/(commands|simulator|${FLOOR.join("|")})/`,
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "command-runtime-stays-light",
      comment:
        "the command runtime every command and --help loads reads settings besides the floor, never the use cases: docs/architecture.md",
      severity: "error",
      from: { path: `^src/commands/(${RUNTIME.join("|")})\\.ts$` },
      to: {
        path: "^src/[^/]+/",
        pathNot: "^src/(commands|report|results|errors|render|settings)/",
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "commands-get-no-api-client",
      comment:
        "no command, the command runtime included, imports a value of src/api (types only): the use cases open and close the service's clients: docs/architecture.md",
      severity: "error",
      from: { path: "^src/commands/" },
      to: { path: "^src/api/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "usecases-floor-exports-its-own",
      comment:
        "the use-case floor re-exports only the use cases' own values, never a value of another folder (types may pass): a command reaches the domain through a use case, not a re-export: docs/architecture.md",
      severity: "error",
      from: { path: "^src/usecases/" },
      to: { path: "^src/", pathNot: "^src/usecases/", dependencyTypes: ["export"], dependencyTypesNot: ["type-only"] },
    },
    {
      name: "model-requests-through-the-port",
      comment:
        "the judge, the caller and the drafts reach a model only through src/model, the one client of POST /chat/completions: docs/architecture.md",
      severity: "error",
      from: { path: "^src/(judge|caller|drafts)/" },
      to: { path: "^src/api/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "folder-not-in-the-layers",
      comment: "every folder of src/ has a layer in docs/architecture.md's list",
      severity: "error",
      from: { path: "^src/", pathNot: under(listed) },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    moduleSystems: ["es6", "cjs"],
  },
};
