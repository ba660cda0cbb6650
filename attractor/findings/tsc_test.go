package findings

import "testing"

func TestParseTSC(t *testing.T) {
	runCases(t, []parseCase{
		{
			name: "plain",
			in: `src/index.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'.
src/util.ts(3,10): error TS2305: Module '"./types"' has no exported member 'Foo'.
src/big.ts(40,1): error TS2741: Property 'id' is missing in type '{ name: string; }' but required in type 'User'.
  Type '{ name: string; }' is missing the following properties from type 'User': id
node_modules/@types/node/index.d.ts(20,1): error TS6200: Definitions of the following identifiers conflict with those in another file: x
../shared/types.ts(1,1): error TS1005: ';' expected.
error TS5023: Unknown compiler option 'strictest'.
`,
			want: []Finding{
				fd("src/index.ts", 12, 5, LevelError, ToolTSC, "TS2322: Type 'string' is not assignable to type 'number'."),
				fd("src/util.ts", 3, 10, LevelError, ToolTSC, `TS2305: Module '"./types"' has no exported member 'Foo'.`),
				fd("src/big.ts", 40, 1, LevelError, ToolTSC, "TS2741: Property 'id' is missing in type '{ name: string; }' but required in type 'User'."),
				fd("node_modules/@types/node/index.d.ts", 20, 1, LevelError, ToolTSC, "TS6200: Definitions of the following identifiers conflict with those in another file: x"),
			},
		},
		{
			name: "pretty, with colours",
			in: "\x1b[96msrc/index.ts\x1b[0m:\x1b[93m12\x1b[0m:\x1b[93m5\x1b[0m - \x1b[91merror\x1b[0m\x1b[90m TS2322: \x1b[0mType 'string' is not assignable to type 'number'.\n" +
				"\n" +
				"\x1b[7m12\x1b[0m     let n: number = \"x\";\n" +
				"\x1b[7m  \x1b[0m \x1b[91m    ~\x1b[0m\n" +
				"\n" +
				"src/old.ts:7:3 - warning TS6133: 'tmp' is declared but its value is never read.\n" +
				"\n" +
				"\n" +
				"Found 2 errors in 2 files.\n" +
				"\n" +
				"Errors  Files\n" +
				"     1  src/index.ts\x1b[90m:12\x1b[0m\n" +
				"     1  src/old.ts\x1b[90m:7\x1b[0m\n",
			want: []Finding{
				fd("src/index.ts", 12, 5, LevelError, ToolTSC, "TS2322: Type 'string' is not assignable to type 'number'."),
				fd("src/old.ts", 7, 3, LevelWarning, ToolTSC, "TS6133: 'tmp' is declared but its value is never read."),
			},
		},
	})
}

func TestParseESLint(t *testing.T) {
	runCases(t, []parseCase{{
		name: "unix format",
		in: `/home/dev/proj/src/index.js:3:10: Missing semicolon. [Error/semi]
/home/dev/proj/src/index.js:5:7: 'unused' is assigned a value but never used. [Warning/no-unused-vars]
/home/dev/proj/src/broken.js:1:8: Parsing error: Unexpected token { [Error]
/home/dev/proj/src/types.ts:2:14: Unexpected any. Specify a different type. [Warning/@typescript-eslint/no-explicit-any]
/home/dev/other/src/index.js:1:1: Missing semicolon. [Error/semi]

5 problems
`,
		want: []Finding{
			fd("src/index.js", 3, 10, LevelError, ToolESLint, "Missing semicolon. (semi)"),
			fd("src/index.js", 5, 7, LevelWarning, ToolESLint, "'unused' is assigned a value but never used. (no-unused-vars)"),
			fd("src/broken.js", 1, 8, LevelError, ToolESLint, "Parsing error: Unexpected token {"),
			fd("src/types.ts", 2, 14, LevelWarning, ToolESLint, "Unexpected any. Specify a different type. (@typescript-eslint/no-explicit-any)"),
		},
	}})
}
