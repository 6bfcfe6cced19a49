/** Types of hack/lint/layers.js, for the TypeScript that reads it (test/lint/layers.test.ts). */
export type Layer = "api" | "library" | "controller" | "cli";
export declare const LAYERS: Record<string, Layer>;
export declare const CLI_IMPORTS: string[];
export declare function layersOf(folders: string[], table?: Record<string, Layer>): [string, Layer][];
export declare function operatorFolders(root: string): string[];
