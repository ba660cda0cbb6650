package webhook

import "github.com/kilroy-bot/kilroy-bot/attractor"

// suggest returns the command nearest to word when it is close enough to
// be a typo, with the same edit-distance rule as every other "did you
// mean" of the bot (pipeline names, node IDs).
func suggest(word string) string {
	return attractor.Suggest(word, []string{string(VerbRun), string(VerbCancel), string(VerbHelp), string(VerbAnswer)})
}
