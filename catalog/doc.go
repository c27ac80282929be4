// Package catalog finds sessions: where they live ($ARBOR_DIR and pi's folder),
// resolving what a user typed (path, id, id prefix, name) to a file, listing,
// indexing and searching them, and moving them to and from the trash.
package catalog
