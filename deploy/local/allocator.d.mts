/** Types of allocator.mjs for the TypeScript that imports it (the bench, the deploy tests). */
export declare const API_GLIBC_TUNABLES: string;
export declare const API_NODE_OPTIONS: string;
export declare function apiProcessEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
