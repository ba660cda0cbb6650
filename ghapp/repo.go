package ghapp

// Repo names a repository.
type Repo struct {
	Owner, Name string
}

// String is "owner/name".
func (r Repo) String() string { return r.Owner + "/" + r.Name }
