// Package txn will hold the transaction coordinator actors, one per
// __transaction_state partition, and their pure core. Nothing is here
// yet; transactions are their own issue (until then FindCoordinator for a
// transactional id answers an error).
package txn
