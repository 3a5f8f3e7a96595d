// The few Node.js globals this package uses, declared here so that it compiles with the
// TypeScript compiler alone (no @types/node needed).
declare function require(id: string): any;
declare const __dirname: string;
declare const process: { env: Record<string, string | undefined>; platform: string };
