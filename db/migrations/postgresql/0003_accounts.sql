-- 0003: accounts. People have a role; people and agents present bearer tokens, which are
-- stored only as SHA-256 hashes. A token's id (its kind prefix and first 8 hex digits, e.g.
-- "mcl_u_1a2b3c4d") names it in lists and `admin token revoke`; it is not enough to use it.

CREATE TABLE users (
  name        TEXT COLLATE "C" PRIMARY KEY,
  role        TEXT COLLATE "C" NOT NULL,             -- viewer | member | admin
  created_ms  BIGINT NOT NULL
);

CREATE TABLE tokens (
  hash        TEXT COLLATE "C" PRIMARY KEY,          -- SHA-256 of the whole token, lowercase hex
  id          TEXT COLLATE "C" NOT NULL,  -- the token's first characters, for display and revoking
  kind        TEXT COLLATE "C" NOT NULL,             -- user | agent
  owner       TEXT COLLATE "C" NOT NULL,  -- users.name (user) or the agent's host name (agent)
  created_ms  BIGINT NOT NULL,
  revoked_ms  BIGINT NOT NULL DEFAULT 0 -- 0: valid
);
CREATE INDEX tokens_id ON tokens(id);
CREATE INDEX tokens_owner ON tokens(kind, owner);
