package findings

import "testing"

func TestParseGCC(t *testing.T) {
	runCases(t, []parseCase{
		{
			name: "gcc",
			in: `In file included from src/main.c:3:
src/util.h:4:6: warning: no previous prototype for 'helper' [-Wmissing-prototypes]
    4 | void helper() {}
      |      ^~~~~~
src/main.c: In function 'main':
src/main.c:10:13: error: 'y' undeclared (first use in this function)
   10 |     int x = y + 1;
      |             ^
src/main.c:10:13: note: each undeclared identifier is reported only once for each function it appears in
src/main.c:12:5: warning: implicit declaration of function 'foo' [-Wimplicit-function-declaration]
/usr/include/stdio.h:356:12: note: expected 'const char * restrict' but argument is of type 'int'
  356 | extern int printf (const char *__restrict __format, ...);
      |                    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
src/parse.c:1:10: fatal error: missing.h: No such file or directory
    1 | #include "missing.h"
      |          ^~~~~~~~~~~
compilation terminated.
`,
			want: []Finding{
				fd("src/util.h", 4, 6, LevelWarning, ToolGCC, "no previous prototype for 'helper' [-Wmissing-prototypes]"),
				fd("src/main.c", 10, 13, LevelError, ToolGCC, "'y' undeclared (first use in this function)"),
				fd("src/main.c", 10, 13, LevelNotice, ToolGCC, "each undeclared identifier is reported only once for each function it appears in"),
				fd("src/main.c", 12, 5, LevelWarning, ToolGCC, "implicit declaration of function 'foo' [-Wimplicit-function-declaration]"),
				fd("src/parse.c", 1, 10, LevelError, ToolGCC, "missing.h: No such file or directory"),
			},
		},
		{
			name: "clang with colours, g++ context lines",
			in: "\x1b[1msrc/main.c:10:13: \x1b[0m\x1b[0;1;31merror: \x1b[0m\x1b[1muse of undeclared identifier 'y'\x1b[0m\n" +
				"   10 |     int x = y + 1;\n" +
				"      | \x1b[0;1;32m            ^\n\x1b[0m" +
				"1 error generated.\n" +
				"src/vec.cpp: In instantiation of 'void push(T) [with T = int]':\n" +
				"src/vec.cpp:22:15:   required from here\n" +
				"src/vec.cpp:9:5: error: no matching function for call to 'grow(int&)'\n",
			want: []Finding{
				fd("src/main.c", 10, 13, LevelError, ToolGCC, "use of undeclared identifier 'y'"),
				fd("src/vec.cpp", 22, 15, LevelNotice, ToolGCC, "required from here"),
				fd("src/vec.cpp", 9, 5, LevelError, ToolGCC, "no matching function for call to 'grow(int&)'"),
			},
		},
	})
}
