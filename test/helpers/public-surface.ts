/**
 * The library's public surface as a notebook sees it (`import * as angle from '../dist/index.js'`):
 * every name lib/index.ts exports, values and types, with its namespaces (`angle.experiments`,
 * `angle.report.figures`) as nested surfaces; and the `angle.<area>.<name>` paths that notebooks
 * and docs use. Read from the sources with TypeScript's parser only (export statements followed
 * file to file, no type checking), so it costs about a second.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';

/** A namespace: each exported name, a leaf (`true`) or a nested namespace. */
export type Surface = Map<string, Surface | true>;

/** The .ts file a relative specifier names; undefined for a package (its names are not followed: `angle.tf` counts as one). */
function moduleFile(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier.replace(/\.js$/, ''));
  if (existsSync(`${base}.ts`)) return `${base}.ts`;
  if (existsSync(base) && statSync(base).isDirectory()) return join(base, 'index.ts');
  throw new Error(`${from}: cannot resolve '${specifier}'`);
}

function hasExport(node: ts.Node): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
}

/** The names `file` exports (see the file comment); a package is opaque (`true`). `cache` also stops export cycles. */
export function surfaceOf(file: string | undefined, cache = new Map<string, Surface>()): Surface | true {
  if (file === undefined) return true;
  const known = cache.get(file);
  if (known) return known;
  const out: Surface = new Map();
  cache.set(file, out);
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const starImports = new Map<string, string>();
  for (const s of src.statements) {
    if (ts.isImportDeclaration(s) && s.importClause?.namedBindings && ts.isNamespaceImport(s.importClause.namedBindings)) {
      const target = moduleFile(file, (s.moduleSpecifier as ts.StringLiteral).text);
      if (target) starImports.set(s.importClause.namedBindings.name.text, target);
    }
  }
  for (const s of src.statements) {
    if (ts.isExportDeclaration(s)) {
      const target = s.moduleSpecifier ? moduleFile(file, (s.moduleSpecifier as ts.StringLiteral).text) : undefined;
      const external = s.moduleSpecifier !== undefined && target === undefined;
      if (!s.exportClause) {
        const all = surfaceOf(target, cache);
        if (all !== true) for (const [k, v] of all) out.set(k, v);
      } else if (ts.isNamespaceExport(s.exportClause)) {
        out.set(s.exportClause.name.text, surfaceOf(target, cache));
      } else {
        for (const e of s.exportClause.elements) {
          const local = (e.propertyName ?? e.name).text;
          const from = external ? true : target ? surfaceOf(target, cache) : starImports.has(local) ? surfaceOf(starImports.get(local), cache) : true;
          const inner = from === true ? true : target ? from.get(local) : from;
          if (inner === undefined) throw new Error(`${file}: exports '${local}', which ${target} does not export`);
          out.set(e.name.text, inner);
        }
      }
    } else if (hasExport(s)) {
      if (ts.isVariableStatement(s)) {
        for (const d of s.declarationList.declarations) if (ts.isIdentifier(d.name)) out.set(d.name.text, true);
      } else if ((ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s) || ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s) || ts.isEnumDeclaration(s) || ts.isModuleDeclaration(s)) && s.name && ts.isIdentifier(s.name)) {
        out.set(s.name.text, true);
      }
    }
  }
  return out;
}

/** Leaves of a surface, namespaces counted by their members. */
export function countNames(s: Surface): number {
  let n = 0;
  for (const v of s.values()) n += v === true ? 1 : countNames(v);
  return n;
}

/** Where a dotted path ends in `surface`: found (at a leaf, whose members are not followed, or a namespace), or the first missing part. */
export function lookUp(surface: Surface, path: readonly string[]): { found: true } | { found: false; missing: string } {
  let here: Surface | true = surface;
  for (let i = 0; i < path.length; i++) {
    if (here === true) return { found: true };
    const next: Surface | true | undefined = here.get(path[i]!);
    if (next === undefined) return { found: false, missing: path.slice(0, i + 1).join('.') };
    here = next;
  }
  return { found: true };
}

/** A notebook's code, cell by cell (markdown left out). */
export function notebookCode(file: string): string {
  const nb = JSON.parse(readFileSync(file, 'utf8')) as { cells: Array<{ cell_type: string; source: string | string[] }> };
  return nb.cells
    .filter((c) => c.cell_type === 'code')
    .map((c) => (Array.isArray(c.source) ? c.source.join('') : c.source))
    .join('\n');
}

/**
 * The library paths `code` uses, each as its parts after `angle`: `angle.report.readResults(...)`
 * gives ['report', 'readResults']; through an alias (`const ex = angle.experiments;` then
 * `ex.Plan`) and destructuring of a namespace (`const { showTable } = angle.notebook;`) too.
 */
export function libraryPaths(code: string): string[][] {
  const paths: string[][] = [];
  // Not after a word character, `/` or a property dot (`x.angle`), but after a spread's `...` (`[...ex.rows()]`).
  const direct = /(?<![\w$/])(?<![^.]\.)angle((?:\.[A-Za-z_$][\w$]*)+)/g;
  for (const m of code.matchAll(direct)) paths.push(m[1]!.slice(1).split('.'));
  for (const m of code.matchAll(/\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*angle((?:\.[A-Za-z_$][\w$]*)+)\s*;/g)) {
    const alias = m[1]!;
    const base = m[2]!.slice(1).split('.');
    for (const u of code.matchAll(new RegExp(`(?<![\\w$])(?<![^.]\\.)${alias.replace(/\$/g, '\\$')}((?:\\.[A-Za-z_$][\\w$]*)+)`, 'g'))) paths.push([...base, ...u[1]!.slice(1).split('.')]);
  }
  for (const m of code.matchAll(/\b(?:const|let|var)\s*\{([^}]*)\}\s*=\s*angle((?:\.[A-Za-z_$][\w$]*)+)\s*;/g)) {
    const base = m[2]!.slice(1).split('.');
    for (const part of m[1]!.split(',')) {
      const name = part.split(':')[0]!.trim();
      if (name) paths.push([...base, name]);
    }
  }
  return paths;
}
