package webhook

// decodeInstallation decodes installation and installation_repositories
// deliveries, which are recorded whatever their action.
func decodeInstallation(event string, payload []byte) (Event, error) {
	var p installationPayload
	if err := unmarshal(payload, &p); err != nil {
		return Event{}, err
	}
	inst := p.Installation
	if inst == nil {
		return Event{}, missing(event, "installation")
	}
	ev := p.base(KindInstallation)
	ev.Installation = InstallationChange{Account: inst.Account.Login, AppID: inst.AppID}
	switch {
	case event == "installation_repositories":
		ev.Installation.Added = repoNames(p.RepositoriesAdded)
		ev.Installation.Removed = repoNames(p.RepositoriesRemoved)
	case p.Action == "created":
		ev.Installation.Added = repoNames(p.Repositories)
	case p.Action == "deleted":
		ev.Installation.Removed = repoNames(p.Repositories)
	}
	return ev, nil
}

func decodePing(payload []byte) (Event, error) {
	var p pingPayload
	if err := unmarshal(payload, &p); err != nil {
		return Event{}, err
	}
	if p.HookID == 0 {
		return Event{}, missing("ping", "hook_id")
	}
	return p.base(KindPing), nil
}
