// Types for tools/build-freshness.mjs, which the tests import.
export declare const STAMP: string;
export declare const STARTED: string;
export declare const BUILD_INPUTS: readonly string[];
export declare function staleness(root: string): string | undefined;
