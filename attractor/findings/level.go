package findings

import "bytes"

// levelWords maps the level words tools print, lower-cased, to levels.
var levelWords = map[string]Level{
	"error":       LevelError,
	"fatal error": LevelError,
	"fatal":       LevelError,
	"warning":     LevelWarning,
	"warn":        LevelWarning,
	"note":        LevelNotice,
	"info":        LevelNotice,
	"remark":      LevelNotice,
	"notice":      LevelNotice,
	"hint":        LevelNotice,
	"help":        LevelNotice,
	"message":     LevelNotice, // tsc's category for informational diagnostics
	"suggestion":  LevelNotice,
}

// maxLevelWord is the longest level word; longer prefixes are not looked up.
const maxLevelWord = len("fatal error")

// lookupLevel finds a level word, ignoring case ("Error", "WARNING").
func lookupLevel(w []byte) (Level, bool) {
	if len(w) == 0 || len(w) > maxLevelWord {
		return "", false
	}
	var lower [maxLevelWord]byte
	for i, c := range w {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	l, ok := levelWords[string(lower[:len(w)])]
	return l, ok
}

// cutLevel splits an optional leading "level:" or "level[CODE]:" (rustc's
// short format) off a message. The code, if any, leads the message.
func cutLevel(msg []byte) (lvl Level, code, rest []byte, ok bool) {
	msg = bytes.TrimLeft(msg, " \t")
	i := bytes.IndexByte(msg, ':')
	if i <= 0 || i > maxLevelWord+16 {
		return "", nil, msg, false
	}
	word := msg[:i]
	if j := bytes.IndexByte(word, '['); j > 0 && word[len(word)-1] == ']' {
		word, code = word[:j], word[j+1:len(word)-1]
	}
	if lvl, ok = lookupLevel(word); !ok {
		return "", nil, msg, false
	}
	return lvl, code, msg[i+1:], true
}
