/** Types of tools/docs-pages.mjs, for the staleness test (test/unit/docs-generated.test.ts). */
export declare const GENERATED_PAGES: string[];
export declare const TOC_MIN_LINES: number;
export declare function renderDocPages(): { path: string; content: string }[];
export declare function renderPage(path: string, committed: string): string;
export declare function serveFlagsTable(): string;
export declare function scenarioKeysTable(): string;
export declare function scenarioLibraryTable(): string;
export declare function benchLatest(): string;
export declare function replicaProfile(): string;
export declare function benchCluster(): string;
