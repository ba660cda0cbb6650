package ghapptest

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// paginate returns the items of the requested page (page; per_page default
// 30, at most 100, as on GitHub) and sets a Link header naming the first,
// previous, next and last pages, which is what clients follow. root is the
// server's URL, for the absolute links GitHub sends.
func paginate[T any](w http.ResponseWriter, r *http.Request, root string, items []T) []T {
	perPage := min(max(intParam(r, "per_page", 30), 1), 100)
	page := max(intParam(r, "page", 1), 1)
	last := max((len(items)+perPage-1)/perPage, 1)
	var links []string
	link := func(p int, rel string) {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(perPage))
		links = append(links, fmt.Sprintf("<%s%s%s?%s>; rel=%q", root, apiPrefix, r.URL.Path, q.Encode(), rel))
	}
	if page > 1 {
		link(min(page-1, last), "prev")
	}
	if page < last {
		link(page+1, "next")
		link(last, "last")
	}
	if page > 1 {
		link(1, "first")
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	start := min((page-1)*perPage, len(items))
	return items[start:min(start+perPage, len(items))]
}

func intParam(r *http.Request, name string, def int) int {
	n, err := strconv.Atoi(r.URL.Query().Get(name))
	if err != nil {
		return def
	}
	return n
}
