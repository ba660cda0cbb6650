package webhook

import (
	"regexp"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/server"
)

// Verb is what a /kilroy comment asks for.
type Verb = server.Verb

// Verbs of a comment command; see server.Verb.
const (
	VerbRun     = server.VerbRun
	VerbCancel  = server.VerbCancel
	VerbHelp    = server.VerbHelp
	VerbAnswer  = server.VerbAnswer
	VerbUnknown = server.VerbUnknown
	VerbInvalid = server.VerbInvalid
)

// Usage lists the commands, for replies to help and unknown commands.
const Usage = server.CommandUsage

// commandPrefix starts the first line of a comment command.
const commandPrefix = "/kilroy"

// Command is a parsed /kilroy comment.
type Command = server.Command

// pipelineName is what a pipeline may be called on a command line; it keeps
// paths, options and markup out of the names a worker looks up.
var pipelineName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// commitSHA is a commit id as `/kilroy run SHA` takes it: 7 to 40
// lower-case hex digits, at least one a digit, so that words such as
// "deadbeef" stay pipeline names.
var commitSHA = regexp.MustCompile(`^[0-9a-f]{7,40}$`)

func isSHA(word string) bool {
	return commitSHA.MatchString(word) && strings.ContainsAny(word, "0123456789")
}

// ParseCommand parses the first line of a comment body. It reports false when
// that line is not a /kilroy command; the rest of the body is never read. The
// prefix and verb are case-insensitive and may be separated by any spaces;
// "/kilroy" alone asks for help and "/kilroyrun" is not a command.
func ParseCommand(body string) (Command, bool) {
	line, _, _ := strings.Cut(body, "\n")
	fields := strings.Fields(line)
	if len(fields) == 0 || !strings.EqualFold(fields[0], commandPrefix) {
		return Command{}, false
	}
	if len(fields) == 1 {
		return Command{Verb: VerbHelp}, true
	}
	word, args := fields[1], fields[2:]
	switch verb := Verb(strings.ToLower(word)); verb {
	case VerbRun, VerbCancel:
		return withPipelines(verb, args), true
	case VerbHelp:
		return Command{Verb: VerbHelp}, true
	case VerbAnswer:
		return answer(args), true
	default:
		return Command{Verb: VerbUnknown, Unknown: word, Suggestion: suggest(strings.ToLower(word))}, true
	}
}

// answer builds an answer command: the node, then the rest of the line
// as the choice, since a choice may be an edge label of several words.
// Missing parts stay empty for the worker to explain.
func answer(args []string) Command {
	cmd := Command{Verb: VerbAnswer}
	if len(args) > 0 {
		cmd.Node, cmd.Choice = args[0], strings.Join(args[1:], " ")
	}
	return cmd
}

// fromFailure is the option of `/kilroy run` that resumes the failed runs
// from the checkpoint before their failed node instead of starting over.
const fromFailure = "--from-failure"

// withPipelines builds a run or cancel command from its arguments. A run
// may name one commit among them (see isSHA); a second one is invalid.
// A run may also say --from-failure.
func withPipelines(verb Verb, args []string) Command {
	var names, invalid []string
	sha, resume := "", false
	for _, a := range args {
		switch {
		case verb == VerbRun && strings.EqualFold(a, fromFailure):
			resume = true
		case verb == VerbRun && isSHA(a) && (sha == "" || sha == a):
			sha = a
		case verb == VerbRun && isSHA(a):
			invalid = append(invalid, a)
		case !pipelineName.MatchString(a):
			invalid = append(invalid, a)
		case !slices.Contains(names, a):
			names = append(names, a)
		}
	}
	if len(invalid) > 0 {
		return Command{Verb: VerbInvalid, Invalid: invalid}
	}
	return Command{Verb: verb, Pipelines: names, SHA: sha, FromFailure: resume}
}
