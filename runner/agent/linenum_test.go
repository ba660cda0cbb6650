package agent

import "testing"

func TestStripLineNumbers(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"read_file format", "  1 | package main\n  2 | \n  3 | func main() {\n  4 | }\n", "package main\n\nfunc main() {\n}\n"},
		{"tab delimited", "1\tpackage main\n2\tfunc foo() {}\n", "package main\nfunc foo() {}\n"},
		{"no line numbers", "package main\n\nfunc main() {}\n", "package main\n\nfunc main() {}\n"},
		{"bitwise or kept", "x := 123 | mask\n", "x := 123 | mask\n"},
		{"mixed, most numbered", "  1 | line one\nno number here\n  3 | line three\n", "line one\nno number here\nline three\n"},
		{"empty", "", ""},
		{"high numbers keep indentation", "100 | func foo() {\n101 |     return 42\n102 | }\n", "func foo() {\n    return 42\n}\n"},
		{"minority numbered kept", "a\nb\n1 | c\n", "a\nb\n1 | c\n"},
		{"pipe data kept", "1|alice\n2|bob\n", "1|alice\n2|bob\n"},
		{"blank numbered line", "1 |\n2 | x\n", "\nx\n"},
		{"no trailing newline", "1 | a\n2 | b", "a\nb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stripLineNumbers(tt.in); got != tt.want {
				t.Errorf("stripLineNumbers(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// What read_file shows, write_file must turn back into the file.
func TestReadFileOutputRoundTrips(t *testing.T) {
	src := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(1 | 2)\n}\n"
	got := stripLineNumbers(numberLines(src, 1, 100))
	if got != src {
		t.Errorf("round trip = %q, want %q", got, src)
	}
}
