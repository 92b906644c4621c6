// Package cleaner will hold the log cleaner actors that compact
// cleanup.policy=compact topics (and __consumer_offsets). Nothing is here
// yet; the log cleaner is its own issue.
package cleaner
