package lake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/segkit/segkit/index"
)

// BrokerOptions configure a BrokerSource. The zero value of every field
// means its default.
type BrokerOptions struct {
	// Timeout bounds each request to the cluster (default 30 s).
	Timeout time.Duration
	// MaxWait is a fetch's max wait time when the partition has nothing
	// new (fetch.max.wait.ms; default 0: the broker answers at once, and
	// the indexer's PollInterval paces the next look).
	MaxWait time.Duration
}

// BrokerSource is a Source over a live Kafka cluster, read as a
// read_committed consumer reads: Fetch requests (isolation level
// READ_COMMITTED, so the broker reads only below the last stable offset
// and returns the aborted transactions of what it returns) to the
// partition's leader, and ListOffsets requests for the earliest offset,
// the last stable offset and offsets by time. The record batches in a
// fetch response are Kafka's on-disk bytes; they are decoded and filtered
// with the same code as DirSource's.
//
// It uses a franz-go client the caller made (with its TLS, SASL and
// seed brokers), and does not close it. It does not consume through the
// client's consumer (no group, no fetch session): each Fetch is one
// request, from the offset asked for.
type BrokerSource struct {
	cl        *kgo.Client
	ctx       context.Context
	o         BrokerOptions
	topic     string
	topicID   [16]byte
	partition int32
	leader    int32 // -1 until found
	lso       int64 // from the last fetch or ListOffsets
	c         committed
}

var _ Source = (*BrokerSource)(nil)

// OpenBroker returns a source for partition of topic on the cluster cl
// talks to. It looks the partition up (its leader and the topic's id);
// ctx bounds every later request too.
func OpenBroker(ctx context.Context, cl *kgo.Client, topic string, partition int32, o BrokerOptions) (*BrokerSource, error) {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	b := &BrokerSource{cl: cl, ctx: ctx, o: o, topic: topic, partition: partition, leader: -1}
	if err := b.lookup(); err != nil {
		return nil, err
	}
	return b, nil
}

// name is the partition as errors name it.
func (b *BrokerSource) name() string {
	return fmt.Sprintf("broker partition %s-%d", b.topic, b.partition)
}

// TopicPartitions lists the partitions of topic, in order.
func TopicPartitions(ctx context.Context, cl *kgo.Client, topic string) ([]int32, error) {
	t, err := topicMetadata(ctx, cl, topic)
	if err != nil {
		return nil, err
	}
	out := make([]int32, 0, len(t.Partitions))
	for _, p := range t.Partitions {
		out = append(out, p.Partition)
	}
	slices.Sort(out)
	return out, nil
}

// topicMetadata asks the cluster for topic.
func topicMetadata(ctx context.Context, cl *kgo.Client, topic string) (*kmsg.MetadataResponseTopic, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("lake: metadata of topic %s: %w", topic, err)
	}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, fmt.Errorf("lake: topic %s: %w", topic, err)
		}
		return t, nil
	}
	return nil, fmt.Errorf("lake: topic %s: %w", topic, kerr.UnknownTopicOrPartition)
}

// lookup finds the partition's leader and the topic's id.
func (b *BrokerSource) lookup() error {
	ctx, cancel := context.WithTimeout(b.ctx, b.o.Timeout)
	defer cancel()
	t, err := topicMetadata(ctx, b.cl, b.topic)
	if err != nil {
		return err
	}
	for _, p := range t.Partitions {
		if p.Partition != b.partition {
			continue
		}
		if err := kerr.ErrorForCode(p.ErrorCode); err != nil && !errors.Is(err, kerr.ReplicaNotAvailable) {
			return fmt.Errorf("lake: %s: %w", b.name(), err)
		}
		if p.Leader < 0 {
			return fmt.Errorf("lake: %s has no leader", b.name())
		}
		b.topicID, b.leader = t.TopicID, p.Leader
		return nil
	}
	return fmt.Errorf("lake: %s: %w", b.name(), kerr.UnknownTopicOrPartition)
}

// stale reports whether err means the leader moved (or the topic was
// recreated): look it up again and retry once.
func stale(err error) bool {
	return errors.Is(err, kerr.NotLeaderForPartition) || errors.Is(err, kerr.UnknownTopicOrPartition) ||
		errors.Is(err, kerr.UnknownTopicID) || errors.Is(err, kerr.FencedLeaderEpoch) ||
		errors.Is(err, kerr.LeaderNotAvailable) || errors.Is(err, kerr.InconsistentTopicID)
}

// Fetch implements Source: one read_committed fetch from the leader.
func (b *BrokerSource) Fetch(from, upTo int64) (Fetched, error) {
	p, err := b.fetch(from)
	if err != nil && stale(err) {
		if lerr := b.lookup(); lerr != nil {
			return Fetched{Next: from}, lerr
		}
		p, err = b.fetch(from)
	}
	if errors.Is(err, kerr.OffsetOutOfRange) && p != nil && p.LogStartOffset >= 0 && from < p.LogStartOffset {
		return Fetched{Next: from}, &OffsetGoneError{Offset: from, Earliest: p.LogStartOffset}
	}
	if err != nil {
		return Fetched{Next: from}, err
	}
	if p.LastStableOffset >= 0 {
		b.lso = p.LastStableOffset
	} else {
		b.lso = p.HighWatermark
	}
	upper := min(upTo, b.lso)
	if from >= upper || len(p.RecordBatches) == 0 {
		return Fetched{Next: from}, nil
	}
	aborted := make([]index.AbortedTxn, len(p.AbortedTransactions))
	for i, a := range p.AbortedTransactions {
		aborted[i] = index.AbortedTxn{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset}
	}
	return b.c.scan(b.name(), p.RecordBatches, aborted, from, upper)
}

// fetch sends one fetch request for offset from. On a partition error it
// returns the partition's response with the error.
func (b *BrokerSource) fetch(from int64) (*kmsg.FetchResponseTopicPartition, error) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = int32(b.o.MaxWait / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = fetchBytes
	req.IsolationLevel = 1 // READ_COMMITTED
	req.SessionID = 0
	req.SessionEpoch = -1 // no fetch session: a full fetch each time
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = b.topic, b.topicID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition = b.partition
	rp.FetchOffset = from
	rp.CurrentLeaderEpoch = -1
	rp.LastFetchedEpoch = -1
	rp.LogStartOffset = -1
	rp.PartitionMaxBytes = fetchBytes
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	ctx, cancel := context.WithTimeout(b.ctx, b.o.Timeout+b.o.MaxWait)
	defer cancel()
	kr, err := b.cl.Broker(int(b.leader)).Request(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("lake: fetch %s at offset %d: %w", b.name(), from, err)
	}
	resp := kr.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, fmt.Errorf("lake: fetch %s at offset %d: %w", b.name(), from, err)
	}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if p.Partition != b.partition {
				continue
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return p, fmt.Errorf("lake: fetch %s at offset %d: %w", b.name(), from, err)
			}
			return p, nil
		}
	}
	return nil, fmt.Errorf("lake: fetch %s at offset %d: the response has no such partition", b.name(), from)
}

// Special timestamps of a ListOffsets request.
const (
	listLatest   = -1 // with read_committed: the last stable offset
	listEarliest = -2 // the log start offset
)

// listOffset sends one ListOffsets request (read_committed) for ts; the
// offset is -1 when no record has a timestamp at or after ts.
func (b *BrokerSource) listOffset(ts int64) (int64, error) {
	off, err := b.listOffsetOnce(ts)
	if err != nil && stale(err) {
		if lerr := b.lookup(); lerr != nil {
			return 0, lerr
		}
		off, err = b.listOffsetOnce(ts)
	}
	return off, err
}

func (b *BrokerSource) listOffsetOnce(ts int64) (int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	req.IsolationLevel = 1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = b.topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = b.partition
	rp.CurrentLeaderEpoch = -1
	rp.Timestamp = ts
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(b.ctx, b.o.Timeout)
	defer cancel()
	kr, err := b.cl.Broker(int(b.leader)).Request(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("lake: list offsets of %s: %w", b.name(), err)
	}
	resp := kr.(*kmsg.ListOffsetsResponse)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if t.Topic != b.topic || p.Partition != b.partition {
				continue
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return 0, fmt.Errorf("lake: list offsets of %s: %w", b.name(), err)
			}
			return p.Offset, nil
		}
	}
	return 0, fmt.Errorf("lake: list offsets of %s: the response has no such partition", b.name())
}

// EarliestOffset implements Source: ListOffsets for the earliest offset
// (the log start offset).
func (b *BrokerSource) EarliestOffset() (int64, error) { return b.listOffset(listEarliest) }

// LastStableOffset implements Source: ListOffsets for the latest offset
// with read_committed, which Kafka answers with the last stable offset.
func (b *BrokerSource) LastStableOffset() (int64, error) {
	o, err := b.listOffset(listLatest)
	if err == nil {
		b.lso = o
	}
	return o, err
}

// OffsetForTime implements Source: ListOffsets by timestamp.
func (b *BrokerSource) OffsetForTime(t time.Time) (int64, bool, error) {
	o, err := b.listOffset(t.UnixMilli())
	if err != nil || o < 0 {
		return 0, false, err
	}
	return o, true, nil
}
