package ghapp

import (
	"errors"
	"testing"
)

func TestRepoInstallation(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		name    string
		repo    Repo
		want    int64
		wantErr error
	}{
		{name: "installed", repo: f.r, want: f.inst},
		{name: "not installed", repo: Repo{Owner: "acme", Name: "nothing"}, wantErr: ErrUninstalled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.app.RepoInstallation(t.Context(), tt.repo)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Errorf("RepoInstallation(%s) = %d, %v; want %d, %v", tt.repo, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
