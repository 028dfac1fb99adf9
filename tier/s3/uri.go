package s3

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
)

// ParseURI returns the remote an s3:// URI names:
//
//	s3://<bucket>[/<prefix>][?endpoint=<url>&region=<region>&virtual-hosted=true&timeout=<duration>]
//
// The keys come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (none:
// anonymous requests); endpoint defaults to AWS_ENDPOINT_URL_S3, then
// AWS_ENDPOINT_URL, and region to AWS_REGION. It makes no request.
func ParseURI(uri string) (*Remote, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("s3: remote URI %q: %w", uri, err)
	}
	if u.Scheme != "s3" || u.Host == "" || u.User != nil || u.Fragment != "" {
		return nil, fmt.Errorf("s3: remote URI %q: want s3://bucket[/prefix][?endpoint=…]", uri)
	}
	q := u.Query()
	c := Config{
		Bucket:    u.Host,
		Endpoint:  first(q.Get("endpoint"), os.Getenv("AWS_ENDPOINT_URL_S3"), os.Getenv("AWS_ENDPOINT_URL")),
		Region:    first(q.Get("region"), os.Getenv("AWS_REGION")),
		AccessKey: os.Getenv("AWS_ACCESS_KEY_ID"),
		SecretKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
	}
	var timeout time.Duration
	for k, v := range q {
		switch k {
		case "endpoint", "region":
		case "virtual-hosted":
			c.VirtualHosted = v[0] == "true"
		case "timeout":
			if timeout, err = time.ParseDuration(v[0]); err != nil || timeout <= 0 {
				return nil, fmt.Errorf("s3: remote URI %q: bad timeout %q", uri, v[0])
			}
		default:
			return nil, fmt.Errorf("s3: remote URI %q: unknown parameter %q", uri, k)
		}
	}
	b, err := NewBucket(c)
	if err != nil {
		return nil, err
	}
	return NewRemote(b, strings.Trim(u.Path, "/"), timeout), nil
}

func first(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
