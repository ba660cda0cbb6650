package attractor

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"250ms", 250 * time.Millisecond, false},
		{"900s", 900 * time.Second, false},
		{"15m", 15 * time.Minute, false},
		{"2h", 2 * time.Hour, false},
		{"1d", 24 * time.Hour, false},
		{"1h30m", 90 * time.Minute, false},
		{"1d12h", 36 * time.Hour, false},
		{"1m500ms", time.Minute + 500*time.Millisecond, false},
		{"1.5h", 90 * time.Minute, false},
		{"0", 0, false},
		{"", 0, true},
		{"5x", 0, true},
		{"900", 0, true},
		{"s", 0, true},
		{"10us", 0, true},
		{"-5s", 0, true},
		{"1.s", 0, true},
		{"99999999999999d", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
