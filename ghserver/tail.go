package ghserver

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
	"github.com/kilroy-bot/kilroy-bot/runpage"
)

// outputTailBytes is how much of the end of each log a tail reads.
const outputTailBytes = 4096

// OutputTail reads the end of a node's logs for its report (the checks'
// RenderOptions.OutputTail of `kilroy-bot run`): only the last
// outputTailBytes of each, since a log may be megabytes long.
func OutputTail(_, dir string) string {
	var b strings.Builder
	for _, name := range []string{"stdout.log", "stderr.log"} {
		b.Write(fileTail(filepath.Join(dir, name), outputTailBytes))
	}
	return b.String()
}

// fileTail returns up to n bytes from the end of path, nil when unreadable.
func fileTail(path string, n int64) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	data := make([]byte, min(n, st.Size()))
	if _, err := f.ReadAt(data, st.Size()-int64(len(data))); err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	return data
}

// liveOutputTail is the end of a node's output for a server's checks,
// while it runs as when it failed: its stdout.log and stderr.log, or when
// it wrote neither (an agent node), its transcript so far made readable.
func liveOutputTail(node, dir string) string {
	if out := OutputTail(node, dir); strings.TrimSpace(out) != "" {
		return out
	}
	for _, name := range runpage.TranscriptFiles {
		data, err := safefile.TailPath(filepath.Join(dir, name), 4*outputTailBytes)
		if err == nil && len(data) > 0 {
			if i := strings.IndexByte(string(data), '\n'); i >= 0 && len(data) == 4*outputTailBytes {
				data = data[i+1:] // the first line was cut
			}
			return runpage.TranscriptText(data)
		}
	}
	return ""
}
