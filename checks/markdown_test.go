package checks

import (
	"strings"
	"testing"
)

func TestMermaidLabel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`vet`, `"vet"`},
		{`say "hi"`, `"say #quot;hi#quot;"`},
		{`a[1] (b) {c} |d|`, `"a#91;1#93; #40;b#41; #123;c#125; #124;d#124;"`},
		{"#quot; stays text", `"#35;quot#59; stays text"`},
		{"<b>x</b> & `y`", `"#lt;b#gt;x#lt;/b#gt; #amp; #96;y#96;"`},
		{"two\nlines\r\n", `"two lines "`},
		{"```\nend", `"#96;#96;#96; end"`},
	} {
		if got := mermaidLabel(tc.in); got != tc.want {
			t.Errorf("mermaidLabel(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestCodeFences(t *testing.T) {
	out := "ok\n```\ninjected\n````\n"
	block := codeBlock(out)
	if !strings.HasPrefix(block, "`````text\n") || !strings.HasSuffix(block, "\n`````\n") {
		t.Errorf("codeBlock chose a fence the content can close:\n%s", block)
	}
	for _, tc := range []struct{ in, want string }{
		{"vet", "`vet`"},
		{"a`b", "``a`b``"},
		{"`x`", "`` `x` ``"},
		{"a\nb", "`a b`"},
		{"", ""},
	} {
		if got := code(tc.in); got != tc.want {
			t.Errorf("code(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := codeCell("a|b"); got != "`a\\|b`" {
		t.Errorf("codeCell = %q", got)
	}
}

func TestCell(t *testing.T) {
	if got, want := cell("a|b\n<script>*x*"), `a\|b &lt;script&gt;\*x\*`; got != want {
		t.Errorf("cell = %q, want %q", got, want)
	}
}
