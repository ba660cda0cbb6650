package findings

import "testing"

func TestParseRust(t *testing.T) {
	runCases(t, []parseCase{
		{
			name: "cargo build",
			in: `   Compiling demo v0.1.0 (/home/dev/proj)
error[E0308]: mismatched types
 --> src/main.rs:4:18
  |
4 |     let x: i32 = "hello";
  |            ---   ^^^^^^^ expected ` + "`i32`, found `&str`" + `
  |            |
  |            expected due to this

warning: unused variable: ` + "`y`" + `
  --> src/lib.rs:12:9
   |
12 |     let y = 3;
   |         ^ help: if this is intentional, prefix it with an underscore: ` + "`_y`" + `
   |
   = note: ` + "`#[warn(unused_variables)]`" + ` on by default

error[E0425]: cannot find value ` + "`z`" + ` in this scope
  --> /home/dev/proj/crates/core/src/lib.rs:20:5
   |
20 |     z + 1
   |     ^ not found in this scope
   |
note: function defined here
  --> src/helper.rs:3:4

warning: use of deprecated function
   --> /home/dev/.cargo/registry/src/index.crates.io-6f17d22bba15001f/dep-1.0.0/src/lib.rs:10:5

Some errors have detailed explanations: E0308, E0425.
For more information about an error, try ` + "`rustc --explain E0308`" + `.
warning: ` + "`demo`" + ` (lib) generated 1 warning
error: could not compile ` + "`demo`" + ` (bin "demo") due to 2 previous errors; 1 warning emitted
`,
			want: []Finding{
				fd("src/main.rs", 4, 18, LevelError, ToolRustc, "E0308: mismatched types"),
				fd("src/lib.rs", 12, 9, LevelWarning, ToolRustc, "unused variable: `y`"),
				fd("crates/core/src/lib.rs", 20, 5, LevelError, ToolRustc, "E0425: cannot find value `z` in this scope"),
			},
		},
		{
			name: "clippy with colours and the short format",
			in: "\x1b[0m\x1b[1m\x1b[33mwarning\x1b[0m\x1b[0m\x1b[1m: this `if` has identical blocks\x1b[0m\n" +
				"\x1b[0m  \x1b[0m\x1b[0m\x1b[1m\x1b[38;5;12m--> \x1b[0m\x1b[0msrc/lib.rs:30:5\x1b[0m\n" +
				"src/main.rs:4:18: error[E0308]: mismatched types\n" +
				"src/main.rs:9:9: warning: unused variable: `q`\n",
			want: []Finding{
				fd("src/lib.rs", 30, 5, LevelWarning, ToolRustc, "this `if` has identical blocks"),
				fd("src/main.rs", 4, 18, LevelError, ToolRustc, "E0308: mismatched types"),
				fd("src/main.rs", 9, 9, LevelWarning, ToolRustc, "unused variable: `q`"),
			},
		},
		{
			name: "cargo test panics, new and old format",
			in: `running 3 tests
test tests::adds ... ok
test tests::subtracts ... FAILED
test tests::indexes ... FAILED

failures:

---- tests::subtracts stdout ----

thread 'tests::subtracts' panicked at src/lib.rs:41:9:
assertion ` + "`left == right`" + ` failed
  left: 1
 right: 2
note: run with ` + "`RUST_BACKTRACE=1`" + ` environment variable to display a backtrace

---- tests::indexes stdout ----
thread 'tests::indexes' panicked at 'index out of bounds: the len is 3 but the index is 5', src/lib.rs:50:5

failures:
    tests::indexes
    tests::subtracts

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
`,
			want: []Finding{
				fd("src/lib.rs", 41, 9, LevelError, ToolRustPanic, "thread 'tests::subtracts' panicked: assertion `left == right` failed"),
				fd("src/lib.rs", 50, 5, LevelError, ToolRustPanic, "thread 'tests::indexes' panicked: index out of bounds: the len is 3 but the index is 5"),
			},
		},
		{
			name: "a panic at the end of output",
			in:   "thread 'main' panicked at src/main.rs:2:5:",
			want: []Finding{fd("src/main.rs", 2, 5, LevelError, ToolRustPanic, "thread 'main' panicked")},
		},
	})
}
