package runpage

import (
	"io/fs"
	"slices"
	"strings"
	"unicode/utf8"
)

// transcriptSuffix names the readable form of a transcript file among a
// node's logs.
const transcriptSuffix = " (readable)"

// transcript adds an agent node's transcript so far, made readable
// (TranscriptText) and redacted, to its logs: the first of
// TranscriptFiles the stage directory has. JSON lines are longer than
// what they say, so four times the log cap is read, and the rendering's
// end is kept.
func (b *builder) transcript(n *Node, dir string, entries []fs.DirEntry) {
	for _, name := range TranscriptFiles {
		if !slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == name && e.Type().IsRegular() }) {
			continue
		}
		data, cut, err := tail(b.root, dir+"/"+name, 4*b.p.opts.LogTail)
		if err != nil {
			b.problem("%s/%s: %v", dir, name, err)
			return
		}
		var kept []string
		for _, l := range lines(data, cut > 0) {
			kept = append(kept, string(l))
		}
		s := b.p.opts.Redactor.Redact(TranscriptText([]byte(strings.Join(kept, "\n"))))
		if len(s) > b.p.opts.LogTail {
			drop := len(s) - b.p.opts.LogTail
			for drop < len(s) && !utf8.RuneStart(s[drop]) {
				drop++
			}
			cut += int64(drop)
			s = s[drop:]
		}
		n.Logs = append(n.Logs, Log{Name: name + transcriptSuffix, Text: strings.ToValidUTF8(s, "\uFFFD"), Omitted: cut})
		return
	}
}
