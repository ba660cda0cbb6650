package server

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner/queue"
)

// The approval of an untrusted pull request. A writer's `/kilroy run`
// approves the head they looked at, which is the head that was current
// when they wrote the comment, not whatever was pushed by the time the bot
// reads it. The bot knows when it heard of each head (the queue's record
// of pull request heads: a head is never recorded before its push), and
// GitHub says when the comment was written. The head current at the
// comment is the last one heard of at or before that time; if that is not
// the head now, a push came after the comment (or the bot cannot tell),
// and nothing runs until a writer approves again. `/kilroy run SHA`
// approves exactly that commit instead, whenever it was pushed, as long as
// it is still the head.

// approval is the verdict on which commit a `/kilroy run` may run.
type approval struct {
	ok bool
	// atComment is the head current when the comment was written, as far
	// as the bot knows ("" when it knows of none): for the reply.
	atComment string
}

// approve decides whether a `/kilroy run` (naming sha, or "") approves
// head. Only an untrusted pull request's command is held to the comment's
// time; a named commit must always be the head.
func approve(sha, head string, untrusted bool, commentedAt time.Time, heads []queue.SeenHead) approval {
	if sha != "" {
		return approval{ok: strings.HasPrefix(head, sha)}
	}
	if !untrusted {
		return approval{ok: true}
	}
	at := headAt(heads, commentedAt)
	return approval{ok: at != "" && at == head, atComment: at}
}

// headAt is the last head heard of at or before t; "" when none was, or t
// is unknown (zero). GitHub's times are whole seconds, so a head heard of
// within the comment's second counts as after it: the bot cannot tell.
func headAt(heads []queue.SeenHead, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	at, last := "", time.Time{}
	for _, h := range heads {
		if !h.SeenAt.After(t) && !h.SeenAt.Before(last) {
			at, last = h.SHA, h.SeenAt
		}
	}
	return at
}

// approvedHead checks a `/kilroy run` against the pull request's head and
// replies when it does not approve it; ok says whether to go on.
func (w *eventWork) approvedHead(ctx context.Context, pr PullRequest, untrusted bool) (ok bool, err error) {
	var heads []queue.SeenHead
	sha := w.ev.Command.SHA
	if untrusted && sha == "" {
		if heads, err = w.s.o.Queue.HeadsOfPR(ctx, w.ev.Repo.FullName, pr.Number); err != nil {
			return false, err
		}
	}
	v := approve(sha, pr.HeadSHA, untrusted, w.ev.CommentedAt, heads)
	if v.ok {
		return true, nil
	}
	w.log.Info("event: command does not approve the head", "head", pr.HeadSHA, "named", sha, "at_comment", v.atComment)
	return false, w.reply(ctx, notApprovedReply(w.ev.Sender.Login, sha, pr.HeadSHA, v.atComment))
}

// notApprovedReply explains why nothing ran and how to approve the head.
func notApprovedReply(sender, named, head, atComment string) string {
	again := fmt.Sprintf("Review it, then comment `/kilroy run %s` to run exactly that commit.", head)
	switch {
	case named != "":
		return fmt.Sprintf("Nothing ran: `%s` is not the head of this pull request; its head is `%s`. %s", named, head, again)
	case atComment == "":
		return fmt.Sprintf("Nothing ran: kilroy cannot tell which commit was this pull request's head when @%s commented "+
			"(it heard of none before the comment). The head is now `%s`. %s", sender, head, again)
	default:
		return fmt.Sprintf("Nothing ran: the head of this pull request changed after @%s's comment: it was `%s` when you commented "+
			"and is now `%s`. %s", sender, atComment, head, again)
	}
}
