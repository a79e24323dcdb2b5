// Types for tools/git-hooks.mjs, which the tests import.
export declare function installHooks(root: string): boolean;
