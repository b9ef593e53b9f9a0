/** Types of stack.mjs for the TypeScript that imports it (the bench, the soak). */
/** The node arguments that run a product process from its source entry (`api/src/main.ts`): compiled, or through tsx. */
export declare function nodeArguments(entry: string, compiled: boolean): string[];
