package findings

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

// mixedSample is a slice of a CI log: several tools' findings among the
// noise (progress, source excerpts, summaries) that makes up most output.
const mixedSample = `# github.com/kilroy-bot/demo/calc
calc/add.go:7:9: undefined: sum
calc/add.go:31:12: Error return value of ` + "`f.Close`" + ` is not checked (errcheck)
	defer f.Close()
	          ^
--- FAIL: TestAdd (0.00s)
    add_test.go:12: Add(2, 2) = 5, want 4
FAIL
FAIL	github.com/kilroy-bot/demo/calc	0.004s
ok  	github.com/kilroy-bot/demo/util	0.002s
src/main.c: In function 'main':
src/main.c:10:13: error: 'y' undeclared (first use in this function)
   10 |     int x = y + 1;
      |             ^
/usr/include/stdio.h:356:12: note: expected 'const char * restrict'
   Compiling demo v0.1.0 (/home/dev/proj)
error[E0308]: mismatched types
 --> src/main.rs:4:18
  |
4 |     let x: i32 = "hello";
  |            ---   ^^^^^^^ expected ` + "`i32`" + `
` + "\x1b[96msrc/index.ts\x1b[0m:\x1b[93m12\x1b[0m:\x1b[93m5\x1b[0m - \x1b[91merror\x1b[0m\x1b[90m TS2322: \x1b[0mType 'string' is not assignable to type 'number'." + `
src/util.ts(3,10): error TS2305: Module '"./types"' has no exported member 'Foo'.
/home/dev/proj/src/index.js:3:10: Missing semicolon. [Error/semi]
___________________________________ test_add ___________________________________
    def test_add():
>       assert add(2, 2) == 5
E       assert 4 == 5
tests/test_calc.py:12: AssertionError
FAILED tests/test_calc.py::test_add - assert 4 == 5
2024-05-01T12:30:45Z INFO starting worker pool size=8 queue=default
12:30:45: connected to localhost:8080
Downloading https://modules.example.com/dep/@v/v1.0.0.zip
[#######################################           ] 80%
`

// BenchmarkParse parses 10 MB of mixed output with no cap, so every line is
// read and every finding kept: the worst case for time and memory.
func BenchmarkParse(b *testing.B) {
	in := mixedOutput(10 << 20)
	opts := Options{Workspace: ws, GoModule: "github.com/kilroy-bot/demo", Max: math.MaxInt}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = len(Parse(in, opts))
	}
	b.ReportMetric(float64(n), "findings/op")
}

// mixedOutput repeats mixedSample with shifted line numbers, so findings stay
// distinct, up to size bytes.
func mixedOutput(size int) []byte {
	var buf bytes.Buffer
	for i := 0; buf.Len() < size; i++ {
		buf.WriteString(strings.ReplaceAll(mixedSample, ":12", fmt.Sprintf(":%d", 12+i)))
	}
	return buf.Bytes()
}
