/**
 * Each package declares exactly what it imports. npm hoists every workspace's dependencies into the
 * root node_modules, so an import that its package.json forgot still resolves here, and breaks only in
 * an image installed with `npm ci --omit=dev` for one workspace, or once a version moves. This test
 * reads every source file of each workspace (and of the root: deploy/ and the tool configurations)
 * with the TypeScript parser, and compares the packages it imports with those its package.json names:
 *
 * - imported but not declared, or declared but never imported, fails;
 * - imported at run time by production code (src/, tests excepted) must be a dependency, and a
 *   dependency must be imported so: anything else is a devDependency, left out of the images;
 * - a package without its own types needs its @types package as a devDependency, and an @types
 *   package is declared only beside the package it types (or because a tsconfig of the workspace names it);
 * - a tool is used when a script of the package.json runs one of its commands (tsc, eslint, vite),
 *   and a package is imported too when a process is started with `node --import <package>`.
 */
import { builtinModules } from 'node:module';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The npm workspaces, and the root itself: its code (deploy/, tool configurations) is development tooling. */
const WORKSPACES = ['shared', 'api', 'ingest-worker', 'audit-worker', 'console', '.'] as const;
const WORKSPACE_DIRS = new Set<string>(WORKSPACES.filter((dir) => dir !== '.'));
/** Folders that hold no source of ours: installed packages, build output, data, reports. */
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.data', '.git', 'test-results', 'playwright-report', 'test-data']);
const SOURCE_FILE = /\.(?:[cm]?[jt]s|[jt]sx)$/;
const TEST_FILE = /\.(?:test|spec)\.[cm]?[jt]sx?$/;

/**
 * Imported by production code, yet needed only in development. The thread boot files
 * (api/src/timeseries/bulk-thread-boot.mjs, ingest-worker/src/csv/staging-thread-boot.mjs) import tsx
 * only when they run from the TypeScript sources (development, vitest); built, they load the compiled
 * sibling and never reach that import, and the images do not install tsx. Such an import must be a
 * dynamic import(): a static one would load the package in the image too.
 */
const DEVELOPMENT_ONLY: Record<string, string[]> = { api: ['tsx'], 'ingest-worker': ['tsx'] };

/**
 * Declared without being imported, scripts or types. Empty today: a package needed only indirectly
 * goes here with the reason, so that the next reader can tell when it stops being needed.
 */
const DECLARED_FOR_ANOTHER_REASON: Record<string, string[]> = {};

interface PackageJson {
  name: string;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  bin?: string | Record<string, string>;
}

interface Usage {
  /** Imported at run time by production code (src/, tests excepted): needed in the image. */
  production: Set<string>;
  /** Imported in any way by any file: tests, tools, types. */
  any: Set<string>;
  /** Where each package is imported, for the failure message. */
  where: Map<string, string>;
  /** Production files that import a package with a static import declaration, by package. */
  staticInProduction: Map<string, string[]>;
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

function sourceFiles(dir: string, isRoot: boolean): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (SKIPPED_DIRS.has(entry.name) || (isRoot && dir === ROOT && (WORKSPACE_DIRS.has(entry.name) || entry.name === 'docs'))) continue;
      files.push(...sourceFiles(full, isRoot));
    } else if (SOURCE_FILE.test(entry.name) && !entry.name.endsWith('.d.ts') && !entry.name.endsWith('.d.mts')) {
      files.push(full);
    }
  }
  return files;
}

const BUILTINS = new Set(builtinModules);

/** The package a bare specifier names ('@scope/name/sub' -> '@scope/name'), or null for a relative path or a Node built-in. */
function packageOf(specifier: string): string | null {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:') || specifier.includes(':')) return null;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
  return BUILTINS.has(name) ? null : name;
}

interface Import {
  specifier: string;
  /** Only its types are used: nothing is loaded at run time. */
  typeOnly: boolean;
  /** Loaded by import() when that line runs, not when the module loads. */
  dynamic: boolean;
}

/** Every module a file imports. */
function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const kind = file.endsWith('x') ? ts.ScriptKind.TSX : /\.[cm]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind);
  const found: Import[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      let typeOnly: boolean;
      if (ts.isImportDeclaration(node)) {
        const clause = node.importClause;
        const bindings = clause?.namedBindings;
        typeOnly = !!clause && (clause.isTypeOnly
          || (!clause.name && !!bindings && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly)));
      } else {
        const clause = node.exportClause;
        typeOnly = node.isTypeOnly || (!!clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((element) => element.isTypeOnly));
      }
      found.push({ specifier: node.moduleSpecifier.text, typeOnly, dynamic: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true, dynamic: false });
    } else if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteralLike(node.arguments[0] as ts.Expression)
      && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) {
      found.push({ specifier: (node.arguments[0] as ts.StringLiteralLike).text, typeOnly: false, dynamic: node.expression.kind === ts.SyntaxKind.ImportKeyword });
    } else if (ts.isArrayLiteralExpression(node)) {
      // A process started with `node --import <package>` loads that package: it is imported too.
      node.elements.forEach((element, index) => {
        const next = node.elements[index + 1];
        if (ts.isStringLiteralLike(element) && element.text === '--import' && next && ts.isStringLiteralLike(next)) {
          found.push({ specifier: next.text, typeOnly: false, dynamic: false });
        }
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function isProductionFile(workspace: string, file: string): boolean {
  if (workspace === '.') return false;
  const relative = path.relative(path.join(ROOT, workspace), file).split(path.sep);
  return relative[0] === 'src' && !TEST_FILE.test(file);
}

function usageOf(workspace: string, self: string): Usage {
  const usage: Usage = { production: new Set(), any: new Set(), where: new Map(), staticInProduction: new Map() };
  const dir = path.join(ROOT, workspace);
  for (const file of sourceFiles(dir, workspace === '.')) {
    const production = isProductionFile(workspace, file);
    for (const { specifier, typeOnly, dynamic } of importsOf(file)) {
      const name = packageOf(specifier);
      if (!name || name === self) continue;
      usage.any.add(name);
      if (!usage.where.has(name)) usage.where.set(name, path.relative(ROOT, file));
      if (production && !typeOnly) usage.production.add(name);
      if (production && !typeOnly && !dynamic) usage.staticInProduction.set(name, [...(usage.staticInProduction.get(name) ?? []), path.relative(ROOT, file)]);
    }
  }
  return usage;
}

function installed(name: string): PackageJson | null {
  const file = path.join(ROOT, 'node_modules', name, 'package.json');
  return existsSync(file) ? readJson<PackageJson>(file) : null;
}

const RESOLUTION: ts.CompilerOptions = { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, allowImportingTsExtensions: true, noEmit: true };

/** The @types package that TypeScript takes a package's types from, or null when the package ships its own. */
function typesPackageFor(name: string, workspace: string): string | null {
  const { resolvedModule } = ts.resolveModuleName(name, path.join(ROOT, workspace, 'index.ts'), RESOLUTION, ts.sys);
  const match = resolvedModule && /[/\\]node_modules[/\\](@types[/\\][^/\\]+)[/\\]/.exec(resolvedModule.resolvedFileName);
  return match ? (match[1] as string).replace('\\', '/') : null;
}

/** The @types packages a tsconfig of this workspace names in compilerOptions.types (the root owns tsconfig.base.json). */
function typesNamedByTsconfig(workspace: string): string[] {
  const files = workspace === '.' ? ['tsconfig.base.json'] : ['tsconfig.json'];
  return files.flatMap((file) => {
    const full = path.join(ROOT, workspace, file);
    if (!existsSync(full)) return [];
    const { config } = ts.readConfigFile(full, ts.sys.readFile) as { config?: { compilerOptions?: { types?: string[] } } };
    return (config?.compilerOptions?.types ?? []).filter((name) => !name.includes('/')).map((name) => `@types/${name}`);
  });
}

/** Declared packages whose command a script of the package.json runs (tsc, eslint, vite...). */
function toolsRunByScripts(manifest: PackageJson, declared: string[]): string[] {
  const words = new Set(Object.values(manifest.scripts ?? {}).flatMap((script) => script.split(/[\s;&|()]+/)));
  return declared.filter((name) => {
    const bin = installed(name)?.bin;
    const commands = typeof bin === 'string' ? [name.split('/').pop() as string] : Object.keys(bin ?? {});
    return commands.some((command) => words.has(command));
  });
}

const cases = WORKSPACES.map((workspace) => {
  const manifest = readJson<PackageJson>(path.join(ROOT, workspace, 'package.json'));
  return { workspace, manifest, usage: usageOf(workspace, manifest.name) };
});

describe('declared dependencies', () => {
  it.each(cases)('$workspace declares every package it imports, and only those', ({ workspace, manifest, usage }) => {
    const dependencies = Object.keys(manifest.dependencies ?? {});
    const devDependencies = Object.keys(manifest.devDependencies ?? {});
    const declared = [...dependencies, ...devDependencies];
    const neededTypes = [...usage.any].map((name) => typesPackageFor(name, workspace)).filter((name) => name !== null);
    const used = new Set([...usage.any, ...neededTypes, ...typesNamedByTsconfig(workspace), ...toolsRunByScripts(manifest, declared)]);

    expect({
      undeclared: [...used].filter((name) => !declared.includes(name)).map((name) => `${name} (${usage.where.get(name) ?? 'types'})`).sort(),
      unused: declared.filter((name) => !used.has(name) && !DECLARED_FOR_ANOTHER_REASON[workspace]?.includes(name)).sort(),
    }, `${workspace}/package.json`).toEqual({ undeclared: [], unused: [] });
  });

  it.each(cases)('$workspace lists as dependencies exactly what its production code loads', ({ workspace, manifest, usage }) => {
    const runtime = [...usage.production].filter((name) => !DEVELOPMENT_ONLY[workspace]?.includes(name));
    const dependencies = Object.keys(manifest.dependencies ?? {});
    expect({
      missingFromDependencies: runtime.filter((name) => !dependencies.includes(name)).sort(),
      onlyNeededInDevelopment: dependencies.filter((name) => !runtime.includes(name)).sort(),
    }, `${workspace}/package.json dependencies`).toEqual({ missingFromDependencies: [], onlyNeededInDevelopment: [] });
    const loadedWhenBuilt = (DEVELOPMENT_ONLY[workspace] ?? []).flatMap((name) => usage.staticInProduction.get(name) ?? []);
    expect(loadedWhenBuilt, 'production files that import a development-only package statically').toEqual([]);
  });

  it('finds imports of every kind, so that the checks above see them', () => {
    const file = path.join(ROOT, 'api/src/timeseries/bulk-thread-boot.mjs');
    expect(importsOf(file).map(({ specifier }) => specifier)).toContain('tsx/esm/api');
    const api = cases.find(({ workspace }) => workspace === 'api');
    expect(api?.usage.production.has('fastify')).toBe(true);
    expect(api?.usage.production.has('vitest')).toBe(false);
    expect(cases.find(({ workspace }) => workspace === '.')?.usage.any.has('tsx')).toBe(true); // `node --import tsx` in deploy/
  });
});
