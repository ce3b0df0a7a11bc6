/**
 * tslab's one trap, checked statically in every notebook: an object literal's shorthand property
 * (`{ modelName }`) that names a variable declared by another cell throws "ReferenceError:
 * modelName is not defined" when the cell runs — tslab rewrites a previous cell's variables where
 * they are read as identifiers, but not inside a shorthand property. Such a cell must write
 * `{ modelName: modelName }`. (Notebook 09's ICL table hit it; the headless run found it minutes
 * into the notebook, this finds it in a second.)
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { packageRoot } from '../lib/util/package-root.js';

const NOTEBOOKS = join(packageRoot(), 'notebooks');

/** Names a cell declares at its top level (const/let/var, functions, classes, imports, destructuring). */
function topLevelNames(src: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  const bind = (n: ts.BindingName) => {
    if (ts.isIdentifier(n)) names.add(n.text);
    else for (const e of n.elements) if (!ts.isOmittedExpression(e)) bind(e.name);
  };
  for (const s of src.statements) {
    if (ts.isVariableStatement(s)) for (const d of s.declarationList.declarations) bind(d.name);
    else if ((ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s)) && s.name) names.add(s.name.text);
    else if (ts.isImportDeclaration(s) && s.importClause) {
      const c = s.importClause;
      if (c.name) names.add(c.name.text);
      const b = c.namedBindings;
      if (b && ts.isNamespaceImport(b)) names.add(b.name.text);
      if (b && ts.isNamedImports(b)) for (const e of b.elements) names.add(e.name.text);
    }
  }
  return names;
}

/** Names bound by a binding pattern or identifier. */
function boundNames(n: ts.BindingName, into: Set<string>): Set<string> {
  if (ts.isIdentifier(n)) into.add(n.text);
  else for (const e of n.elements) if (!ts.isOmittedExpression(e)) boundNames(e.name, into);
  return into;
}

/** Names a scope node declares itself: a function's parameters and name, a block's or loop's declarations, a catch variable. */
function scopeNames(scope: ts.Node): Set<string> {
  const names = new Set<string>();
  if (ts.isFunctionLike(scope)) {
    for (const p of scope.parameters) boundNames(p.name, names);
    if ((ts.isFunctionExpression(scope) || ts.isFunctionDeclaration(scope)) && scope.name) names.add(scope.name.text);
  }
  if (ts.isCatchClause(scope) && scope.variableDeclaration) boundNames(scope.variableDeclaration.name, names);
  if ((ts.isForStatement(scope) || ts.isForOfStatement(scope) || ts.isForInStatement(scope)) && scope.initializer && ts.isVariableDeclarationList(scope.initializer)) {
    for (const d of scope.initializer.declarations) boundNames(d.name, names);
  }
  if (ts.isBlock(scope) || ts.isSourceFile(scope)) {
    for (const s of scope.statements) {
      if (ts.isVariableStatement(s)) for (const d of s.declarationList.declarations) boundNames(d.name, names);
      else if ((ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s)) && s.name) names.add(s.name.text);
    }
  }
  return names;
}

/** Whether `name` at `node` resolves to a declaration of its own cell (any enclosing scope). */
function declaredInCell(node: ts.Node, name: string): boolean {
  for (let n: ts.Node | undefined = node.parent; n; n = n.parent) if (scopeNames(n).has(name)) return true;
  return false;
}

/** `cell N: name (line)` for each shorthand property naming another cell's variable. */
export function crossCellShorthands(cells: readonly string[]): string[] {
  const found: string[] = [];
  const earlier = new Set<string>();
  cells.forEach((code, i) => {
    const src = ts.createSourceFile(`cell${i}.ts`, code, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
    const visit = (n: ts.Node) => {
      if (ts.isShorthandPropertyAssignment(n) && earlier.has(n.name.text) && !declaredInCell(n, n.name.text)) {
        const { line } = src.getLineAndCharacterOfPosition(n.getStart());
        found.push(`code cell ${i + 1}, line ${line + 1}: { ${n.name.text} } names another cell's variable; write { ${n.name.text}: ${n.name.text} }`);
      }
      ts.forEachChild(n, visit);
    };
    visit(src);
    for (const name of topLevelNames(src)) earlier.add(name);
  });
  return found;
}

test('the check finds a shorthand naming another cell\'s variable, and only that', () => {
  const cells = [
    'const modelName = "m"; const table4 = 1; const plain = 0;',
    'const plain = 2;\nf({ modelName, plain, table4: table4 });\nconst g = (modelName: string) => ({ modelName });\nfor (const table4 of []) h({ table4 });\nk(() => ({ table4 }));',
  ];
  assert.deepEqual(crossCellShorthands(cells), [
    "code cell 2, line 2: { modelName } names another cell's variable; write { modelName: modelName }",
    "code cell 2, line 5: { table4 } names another cell's variable; write { table4: table4 }",
  ]);
});

test('no notebook has a shorthand property naming another cell\'s variable (tslab throws ReferenceError on it)', () => {
  const problems: string[] = [];
  for (const f of readdirSync(NOTEBOOKS).filter((n) => n.endsWith('.ipynb')).sort()) {
    const nb = JSON.parse(readFileSync(join(NOTEBOOKS, f), 'utf8')) as { cells: Array<{ cell_type: string; source: string | string[] }> };
    const code = nb.cells.filter((c) => c.cell_type === 'code').map((c) => (Array.isArray(c.source) ? c.source.join('') : c.source));
    for (const p of crossCellShorthands(code)) problems.push(`notebooks/${f}: ${p}`);
  }
  assert.deepEqual(problems, []);
});
