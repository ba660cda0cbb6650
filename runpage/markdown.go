package runpage

import (
	"html"
	"html/template"
	"strings"
)

// Markdown renders the subset of Markdown our reports use (package checks
// writes it for the summary check and report.md) as HTML: ATX headings,
// paragraphs, block quotes, "- " lists, pipe tables, fenced code blocks,
// and inline code spans, **strong**, _emphasis_, links and backslash
// escapes. Anything else shows as text. Every piece of text is unescaped
// once (the reports write &lt; for <) and escaped again, and only http(s),
// root-relative and fragment links become anchors, so no input yields
// markup of its own. A mermaid block is shown as its source, folded: the
// page runs no script to draw it, and the node table says the same.
func Markdown(src string) template.HTML {
	var b strings.Builder
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); {
		i = block(&b, lines, i)
	}
	return template.HTML(b.String())
}

// block renders the block starting at lines[i] and returns the index of
// the line after it.
func block(b *strings.Builder, lines []string, i int) int {
	line := lines[i]
	switch {
	case strings.TrimSpace(line) == "":
		return i + 1
	case fence(line) > 0:
		return codeBlock(b, lines, i)
	case heading(line) > 0:
		n := heading(line)
		tag := "h" + string(rune('2'+min(n, 5)-1)) // the page's own title is the h1
		b.WriteString("<" + tag + ">" + inline(strings.TrimSpace(line[n:])) + "</" + tag + ">\n")
		return i + 1
	case isTableStart(lines, i):
		return table(b, lines, i)
	case listItem(line) != "":
		b.WriteString("<ul>\n")
		for ; i < len(lines) && listItem(lines[i]) != ""; i++ {
			b.WriteString("<li>" + inline(listItem(lines[i])) + "</li>\n")
		}
		b.WriteString("</ul>\n")
		return i
	case strings.HasPrefix(line, ">"):
		var quote []string
		for ; i < len(lines) && strings.HasPrefix(lines[i], ">"); i++ {
			quote = append(quote, strings.TrimPrefix(strings.TrimPrefix(lines[i], ">"), " "))
		}
		b.WriteString("<blockquote><p>" + inline(strings.Join(quote, "\n")) + "</p></blockquote>\n")
		return i
	}
	var para []string
	for ; i < len(lines) && paragraphLine(lines, i); i++ {
		para = append(para, lines[i])
	}
	b.WriteString("<p>" + inline(strings.Join(para, "\n")) + "</p>\n")
	return i
}

// paragraphLine reports whether lines[i] continues a paragraph.
func paragraphLine(lines []string, i int) bool {
	l := lines[i]
	return strings.TrimSpace(l) != "" && fence(l) == 0 && heading(l) == 0 && listItem(l) == "" &&
		!strings.HasPrefix(l, ">") && !isTableStart(lines, i)
}

// fence is the length of the backtick fence that opens or closes a code
// block on line, or 0.
func fence(line string) int {
	n := len(line) - len(strings.TrimLeft(line, "`"))
	if n < 3 {
		return 0
	}
	return n
}

func codeBlock(b *strings.Builder, lines []string, i int) int {
	n := fence(lines[i])
	info := strings.TrimSpace(lines[i][n:])
	var body []string
	for i++; i < len(lines); i++ {
		if fence(lines[i]) >= n && strings.TrimSpace(strings.TrimLeft(lines[i], "`")) == "" {
			i++
			break
		}
		body = append(body, lines[i])
	}
	pre := "<pre><code>" + html.EscapeString(strings.Join(body, "\n")) + "</code></pre>\n"
	if info == "mermaid" {
		pre = "<details class=\"graph\"><summary>Flowchart (Mermaid source)</summary>\n" + pre + "</details>\n"
	}
	b.WriteString(pre)
	return i
}

// heading is the level of an ATX heading line ("## x"), or 0.
func heading(line string) int {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n == 0 || n > 6 || len(line) == n || line[n] != ' ' {
		return 0
	}
	return n
}

// listItem is the text of a "- " or "* " list item, or "".
func listItem(line string) string {
	for _, p := range []string{"- ", "* "} {
		if s, ok := strings.CutPrefix(line, p); ok && strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// isTableStart reports whether a pipe table starts at lines[i]: a row,
// then a delimiter row such as |---|---:|.
func isTableStart(lines []string, i int) bool {
	if i+1 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i]), "|") {
		return false
	}
	d := strings.TrimSpace(lines[i+1])
	return strings.HasPrefix(d, "|") && strings.Contains(d, "-") && strings.Trim(d, "|:- ") == ""
}

func table(b *strings.Builder, lines []string, i int) int {
	align := cells(lines[i+1])
	row := func(line, tag string) {
		b.WriteString("<tr>")
		for k, c := range cells(line) {
			attr := ""
			if k < len(align) && strings.HasSuffix(strings.TrimSpace(align[k]), ":") {
				attr = ` class="num"`
			}
			b.WriteString("<" + tag + attr + ">" + inline(strings.TrimSpace(c)) + "</" + tag + ">")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("<table>\n<thead>")
	row(lines[i], "th")
	b.WriteString("</thead>\n<tbody>\n")
	for i += 2; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
		row(lines[i], "td")
	}
	b.WriteString("</tbody>\n</table>\n")
	return i
}

// cells splits a table row on its unescaped pipes; an escaped pipe is a
// pipe in the cell, in code spans too (as GitHub reads tables).
func cells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var out []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '\\' && i+1 < len(line):
			cur.WriteString(line[i : i+2]) // kept for inline
			i++
		case line[i] == '|':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(out, cur.String())
}
