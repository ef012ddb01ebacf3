package scoringwire

import (
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// QueryURL is the Prometheus range query of one query over [now-range, now] with step seconds:
// the request the agent sends to a Summary's SourceEndpoint, and so where a token the summary
// carries goes (the hub checks that host before it lists a scorer for the agents).
func QueryURL(endpoint, query string, now time.Time, rangeSeconds, step int64) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute URL", endpoint)
	}
	q := u.Query()
	q.Set("query", query)
	q.Set("start", strconv.FormatInt(now.Add(-time.Duration(rangeSeconds)*time.Second).Unix(), 10))
	q.Set("end", strconv.FormatInt(now.Unix(), 10))
	q.Set("step", strconv.FormatInt(step, 10))
	u.RawQuery = q.Encode()
	return u.String(), nil
}
