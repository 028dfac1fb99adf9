package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/segkit/segkit/lake"
)

// brokerURL is a topic on a live cluster: kafka://HOST:PORT[,HOST:PORT…]/TOPIC.
type brokerURL struct {
	seeds []string
	topic string
}

// isBrokerURL reports whether s names a live cluster rather than a
// directory.
func isBrokerURL(s string) bool { return strings.HasPrefix(s, "kafka://") }

// parseBrokerURL parses kafka://HOST:PORT[,HOST:PORT…]/TOPIC.
func parseBrokerURL(s string) (brokerURL, error) {
	rest, ok := strings.CutPrefix(s, "kafka://")
	if !ok {
		return brokerURL{}, fmt.Errorf("%q: want kafka://HOST:PORT[,HOST:PORT…]/TOPIC", s)
	}
	hosts, topic, ok := strings.Cut(rest, "/")
	if !ok || topic == "" {
		return brokerURL{}, fmt.Errorf("%q: no topic (want kafka://HOST:PORT[,HOST:PORT…]/TOPIC)", s)
	}
	if err := validTopic(topic); err != nil {
		return brokerURL{}, fmt.Errorf("%q: %v", s, err)
	}
	var u brokerURL
	for _, h := range strings.Split(hosts, ",") {
		if h == "" {
			return brokerURL{}, fmt.Errorf("%q: an empty broker address", s)
		}
		if i := strings.LastIndexByte(h, ':'); i <= 0 || i == len(h)-1 {
			return brokerURL{}, fmt.Errorf("%q: broker %q is not HOST:PORT", s, h)
		}
		u.seeds = append(u.seeds, h)
	}
	u.topic = topic
	return u, nil
}

// validTopic applies Kafka's rule for topic names (Topic.validate): 1 to
// 249 of [a-zA-Z0-9._-], not "." or "..".
func validTopic(t string) error {
	if t == "." || t == ".." {
		return fmt.Errorf("topic name %q is not allowed", t)
	}
	if len(t) > 249 {
		return fmt.Errorf("topic name of %d characters (at most 249)", len(t))
	}
	for _, c := range []byte(t) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("topic name %q: %q is not one of [a-zA-Z0-9._-]", t, c)
		}
	}
	return nil
}

// client connects to the cluster: plain TCP, no authentication (a
// library user with TLS or SASL builds a kgo.Client and uses
// lake.OpenBroker).
func (u brokerURL) client() (*kgo.Client, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(u.seeds...))
	if err != nil {
		return nil, fmt.Errorf("kafka://%s: %v", strings.Join(u.seeds, ","), err)
	}
	return cl, nil
}

// String is the URL again.
func (u brokerURL) String() string {
	return "kafka://" + strings.Join(u.seeds, ",") + "/" + u.topic
}

// open opens partition p of the topic.
func (u brokerURL) open(ctx context.Context, cl *kgo.Client, p int32) (*lake.BrokerSource, error) {
	src, err := lake.OpenBroker(ctx, cl, u.topic, p, lake.BrokerOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", u, err)
	}
	return src, nil
}
