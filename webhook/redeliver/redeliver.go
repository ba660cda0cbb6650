package redeliver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/kilroy-bot/kilroy-bot/ghapp"
)

// Defaults for the zero values of Options.
const (
	DefaultEvery       = 10 * time.Minute
	DefaultWindow      = 72 * time.Hour // as long as GitHub keeps deliveries
	DefaultMaxAttempts = 8
	// pending is how long a redelivery the Recoverer asked for may take to
	// show up in GitHub's list before it is asked for again.
	pending = time.Minute
)

// Hooks is the App's webhook delivery log on GitHub (ghapp.App).
type Hooks interface {
	HookDeliveries(ctx context.Context, since time.Time) ([]ghapp.HookDelivery, error)
	RedeliverHook(ctx context.Context, id int64) error
}

// Recorded says which delivery GUIDs the bot has recorded (queue.Queue).
type Recorded interface {
	KnownDeliveries(ctx context.Context, ids []string) (map[string]bool, error)
}

// Options configure a Recoverer.
type Options struct {
	Every       time.Duration // between passes (default 10m)
	Window      time.Duration // how far back a pass looks (default 72h)
	MaxAttempts int           // failed attempts of one GUID after which it is left alone (default 8)
	Logger      *slog.Logger
	Now         func() time.Time
}

// Recoverer asks GitHub to redeliver the deliveries the bot missed.
type Recoverer struct {
	hooks    Hooks
	recorded Recorded
	opts     Options

	mu    sync.Mutex
	asked map[string]time.Time // GUID → when this Recoverer asked for it
}

// New returns a Recoverer over GitHub's delivery log and the bot's record.
func New(hooks Hooks, recorded Recorded, opts Options) *Recoverer {
	opts.Every = cmp.Or(opts.Every, DefaultEvery)
	opts.Window = cmp.Or(opts.Window, DefaultWindow)
	opts.MaxAttempts = cmp.Or(opts.MaxAttempts, DefaultMaxAttempts)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Recoverer{hooks: hooks, recorded: recorded, opts: opts, asked: map[string]time.Time{}}
}

// Run makes a pass at once and then every Every until ctx ends. A failed
// pass is logged and the next one tries again.
func (r *Recoverer) Run(ctx context.Context) {
	t := time.NewTicker(r.opts.Every)
	defer t.Stop()
	for {
		if res, err := r.Pass(ctx); err != nil && ctx.Err() == nil {
			r.opts.Logger.WarnContext(ctx, "redeliver: pass failed", "err", err, "redelivered", len(res.Redelivered))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Result is what one pass did.
type Result struct {
	Listed      int      // attempts listed
	Redelivered []string // GUIDs asked for again
}

// Pass lists the window's deliveries and redelivers the missed ones. It
// goes on past a failed redelivery and returns every error.
func (r *Recoverer) Pass(ctx context.Context) (Result, error) {
	now := r.opts.Now()
	attempts, err := r.hooks.HookDeliveries(ctx, now.Add(-r.opts.Window))
	res := Result{Listed: len(attempts)}
	if err != nil {
		return res, fmt.Errorf("redeliver: %w", err)
	}
	missed := r.missed(ctx, attempts, now)
	if len(missed) == 0 {
		return res, nil
	}
	guids := make([]string, len(missed))
	for i, m := range missed {
		guids[i] = m.GUID
	}
	known, err := r.recorded.KnownDeliveries(ctx, guids)
	if err != nil {
		return res, fmt.Errorf("redeliver: %w", err)
	}
	var errs []error
	for _, m := range missed {
		if known[m.GUID] {
			continue
		}
		if err := r.hooks.RedeliverHook(ctx, m.ID); err != nil {
			errs = append(errs, fmt.Errorf("redeliver %s (%s): %w", m.GUID, m.Event, err))
			continue
		}
		r.remember(m.GUID, now)
		res.Redelivered = append(res.Redelivered, m.GUID)
		r.opts.Logger.InfoContext(ctx, "redeliver: asked GitHub to deliver again", "delivery", m.GUID,
			"event", m.Event, "action", m.Action, "status", m.StatusCode, "at", m.DeliveredAt)
	}
	return res, errors.Join(errs...)
}

// failed reports whether the bot did not take an attempt: GitHub could not
// reach it (0) or it answered 5xx. A 4xx is an answer: sending the same
// bytes again gets the same one.
func failed(d ghapp.HookDelivery) bool { return d.StatusCode == 0 || d.StatusCode >= 500 }

// missed returns the newest attempt of every GUID all of whose attempts
// failed, oldest GUID first, leaving out those asked for within pending
// and those that failed MaxAttempts times.
func (r *Recoverer) missed(ctx context.Context, attempts []ghapp.HookDelivery, now time.Time) []ghapp.HookDelivery {
	type guid struct {
		newest ghapp.HookDelivery
		fails  int
		taken  bool
	}
	byGUID := map[string]*guid{}
	for _, d := range attempts {
		g := byGUID[d.GUID]
		if g == nil {
			g = &guid{newest: d}
			byGUID[d.GUID] = g
		}
		if d.ID > g.newest.ID {
			g.newest = d
		}
		if failed(d) {
			g.fails++
		} else {
			g.taken = true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []ghapp.HookDelivery
	for id, g := range byGUID {
		switch {
		case g.taken || id == "":
		case now.Sub(r.asked[id]) < pending:
		case g.fails >= r.opts.MaxAttempts:
			r.opts.Logger.WarnContext(ctx, "redeliver: giving up on a delivery", "delivery", id,
				"event", g.newest.Event, "failed_attempts", g.fails, "last_status", g.newest.StatusCode)
		default:
			out = append(out, g.newest)
		}
	}
	for id, at := range r.asked {
		if now.Sub(at) > r.opts.Window {
			delete(r.asked, id)
		}
	}
	slices.SortFunc(out, func(a, b ghapp.HookDelivery) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func (r *Recoverer) remember(guid string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked[guid] = at
}
