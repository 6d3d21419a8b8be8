-- Label search without reading every label: an FTS5 index of the jobs' labels with the trigram
-- tokenizer (SQLite 3.34+), so a substring of three characters or more is found through the
-- trigrams it contains. External content: the labels stay in jobs, the index holds only trigrams,
-- and triggers keep it in step. The history query confirms each candidate with LIKE, so the
-- matching rules stay those of a case-insensitive (ASCII) substring; shorter substrings still read
-- the jobs_label index (migration 0002).
CREATE VIRTUAL TABLE jobs_label_search USING fts5(label, content = 'jobs', content_rowid = 'id',
                                                  tokenize = 'trigram');
INSERT INTO jobs_label_search(jobs_label_search) VALUES('rebuild');

CREATE TRIGGER jobs_label_search_insert AFTER INSERT ON jobs BEGIN
  INSERT INTO jobs_label_search(rowid, label) VALUES (new.id, new.label);
END;
CREATE TRIGGER jobs_label_search_delete AFTER DELETE ON jobs BEGIN
  INSERT INTO jobs_label_search(jobs_label_search, rowid, label) VALUES ('delete', old.id, old.label);
END;
CREATE TRIGGER jobs_label_search_update AFTER UPDATE OF label ON jobs BEGIN
  INSERT INTO jobs_label_search(jobs_label_search, rowid, label) VALUES ('delete', old.id, old.label);
  INSERT INTO jobs_label_search(rowid, label) VALUES (new.id, new.label);
END;
