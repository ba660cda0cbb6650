package findings

import "testing"

func TestParseGo(t *testing.T) {
	runCases(t, []parseCase{
		{
			name: "go build",
			in: `# github.com/kilroy-bot/demo/calc
calc/add.go:7:9: undefined: sum
calc/add.go:12:2: declared and not used: x
# github.com/kilroy-bot/demo
./main.go:5:2: "os" imported and not used
`,
			want: []Finding{
				fd("calc/add.go", 7, 9, LevelError, ToolGo, "undefined: sum"),
				fd("calc/add.go", 12, 2, LevelError, ToolGo, "declared and not used: x"),
				fd("main.go", 5, 2, LevelError, ToolGo, `"os" imported and not used`),
			},
		},
		{
			name: "go vet, with and without the vet prefix",
			in: `# github.com/kilroy-bot/demo/calc
# [github.com/kilroy-bot/demo/calc]
calc/format.go:9:2: fmt.Printf format %d has arg s of wrong type string
vet: calc/format_test.go:15:3: undefined: helper
./calc/old.go:4: possible misuse of unsafe.Pointer
`,
			want: []Finding{
				fd("calc/format.go", 9, 2, LevelError, ToolGo, "fmt.Printf format %d has arg s of wrong type string"),
				fd("calc/format_test.go", 15, 3, LevelError, ToolGo, "undefined: helper"),
				fd("calc/old.go", 4, 0, LevelError, ToolGo, "possible misuse of unsafe.Pointer"),
			},
		},
		{
			name: "staticcheck and golangci-lint with source excerpts",
			in: `calc/add.go:20:6: func unused is unused (U1000)
calc/add.go:31:12: Error return value of ` + "`f.Close`" + ` is not checked (errcheck)
	defer f.Close()
	          ^
main.go:3:1: File is not ` + "`gofmt`" + `-ed with ` + "`-s`" + ` (gofmt)
/home/dev/proj/internal/x/x.go:8:2: ineffectual assignment to err (ineffassign)
/home/dev/go/pkg/mod/example.com/dep@v1.0.0/dep.go:3:1: exported func should have comment (revive)
3 issues:
* errcheck: 1
`,
			want: []Finding{
				fd("calc/add.go", 20, 6, LevelError, ToolGo, "func unused is unused (U1000)"),
				fd("calc/add.go", 31, 12, LevelError, ToolGo, "Error return value of `f.Close` is not checked (errcheck)"),
				fd("main.go", 3, 1, LevelError, ToolGo, "File is not `gofmt`-ed with `-s` (gofmt)"),
				fd("internal/x/x.go", 8, 2, LevelError, ToolGo, "ineffectual assignment to err (ineffassign)"),
			},
		},
	})
}

func TestParseGoTest(t *testing.T) {
	const mod = "github.com/kilroy-bot/demo"
	const failing = `--- FAIL: TestAdd (0.00s)
    add_test.go:12: Add(2, 2) = 5, want 4
--- FAIL: TestSub (0.00s)
    --- FAIL: TestSub/negative (0.00s)
        sub_test.go:30: Sub(-1, 1) = 0, want -2
FAIL
FAIL	github.com/kilroy-bot/demo/calc	0.004s
--- FAIL: TestRoot (0.00s)
    root_test.go:7: boom
FAIL
FAIL	github.com/kilroy-bot/demo	0.002s
ok  	github.com/kilroy-bot/demo/util	0.002s
FAIL
`
	runCases(t, []parseCase{
		{
			name: "failures placed by the package line",
			opts: Options{GoModule: mod},
			in:   failing,
			want: []Finding{
				fd("calc/add_test.go", 12, 0, LevelError, ToolGoTest, "Add(2, 2) = 5, want 4"),
				fd("calc/sub_test.go", 30, 0, LevelError, ToolGoTest, "Sub(-1, 1) = 0, want -2"),
				fd("root_test.go", 7, 0, LevelError, ToolGoTest, "boom"),
			},
		},
		{
			name: "without the module, files are taken to be at the root",
			in:   failing,
			want: []Finding{
				fd("add_test.go", 12, 0, LevelError, ToolGoTest, "Add(2, 2) = 5, want 4"),
				fd("sub_test.go", 30, 0, LevelError, ToolGoTest, "Sub(-1, 1) = 0, want -2"),
				fd("root_test.go", 7, 0, LevelError, ToolGoTest, "boom"),
			},
		},
		{
			name: "a package of another module has no known directory",
			opts: Options{GoModule: mod},
			in: `--- FAIL: TestX (0.00s)
    x_test.go:3: nope
FAIL
FAIL	example.com/other	0.001s
`,
			want: nil,
		},
		{
			name: "verbose: logs of passing and skipped tests are dropped",
			opts: Options{GoModule: mod},
			in: `=== RUN   TestAdd
    add_test.go:10: checking 2+2
--- PASS: TestAdd (0.00s)
=== RUN   TestSub
=== RUN   TestSub/positive
    sub_test.go:20: checking 2-1
=== RUN   TestSub/negative
    sub_test.go:30: Sub(-1, 1) = 0, want -2
--- FAIL: TestSub (0.00s)
    --- PASS: TestSub/positive (0.00s)
    --- FAIL: TestSub/negative (0.00s)
=== RUN   TestMul
    mul_test.go:8: slow test; skipping
--- SKIP: TestMul (0.00s)
FAIL
FAIL	github.com/kilroy-bot/demo/calc	0.003s
=== RUN   TestTrim
    trim_test.go:5: trimming
--- PASS: TestTrim (0.00s)
=== RUN   TestPad
    pad_test.go:9: padding
PASS
ok  	github.com/kilroy-bot/demo/util	0.001s
`,
			want: []Finding{
				fd("calc/sub_test.go", 30, 0, LevelError, ToolGoTest, "Sub(-1, 1) = 0, want -2"),
			},
		},
		{
			name: "full paths and a build failure from vet",
			opts: Options{GoModule: mod},
			in: `--- FAIL: TestParse (0.00s)
    /home/dev/proj/parse/parse_test.go:44: unexpected EOF
FAIL
FAIL	github.com/kilroy-bot/demo/parse	0.002s
# github.com/kilroy-bot/demo/lex
# [github.com/kilroy-bot/demo/lex]
vet: lex/lex_test.go:9:2: undefined: tokens
FAIL	github.com/kilroy-bot/demo/lex [build failed]
`,
			want: []Finding{
				fd("parse/parse_test.go", 44, 0, LevelError, ToolGoTest, "unexpected EOF"),
				fd("lex/lex_test.go", 9, 2, LevelError, ToolGo, "undefined: tokens"),
			},
		},
		{
			name: "output cut before the package line",
			opts: Options{GoModule: mod},
			in: `--- FAIL: TestAdd (0.00s)
    add_test.go:12: Add(2, 2) = 5, want 4
`,
			want: []Finding{fd("add_test.go", 12, 0, LevelError, ToolGoTest, "Add(2, 2) = 5, want 4")},
		},
	})
}
