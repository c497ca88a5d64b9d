-- Every SQL statement of agent_memory.store, as composed. Written by
-- scripts/snapshot_statements.py; do not edit by hand.

-- active_sessions._CARRY
UPDATE active_sessions
SET session_id = %(session_id)s, session_updated_at = %(at)s, updated_at = clock_timestamp()
WHERE tenant_id = %(tenant_id)s AND agent_id = %(agent_id)s
RETURNING session_id, session_updated_at, last_reset_at

-- active_sessions._ENSURE
INSERT INTO active_sessions (tenant_id, agent_id, last_reset_at, updated_at)
VALUES (%(tenant_id)s, %(agent_id)s, clock_timestamp(), clock_timestamp())
ON CONFLICT (tenant_id, agent_id) DO NOTHING

-- active_sessions._FIND_RUN
SELECT run_id, session_id_before, session_id_after, carried, recorded_at, kind, render_time
  FROM agent_runs
WHERE tenant_id = %(tenant_id)s AND agent_id = %(agent_id)s AND run_id = %(run_id)s

-- active_sessions._GET
SELECT session_id, session_updated_at, last_reset_at FROM active_sessions
WHERE tenant_id = %(tenant_id)s AND agent_id = %(agent_id)s

-- active_sessions._GET_LOCKED
SELECT session_id, session_updated_at, last_reset_at FROM active_sessions
WHERE tenant_id = %(tenant_id)s AND agent_id = %(agent_id)s
FOR UPDATE

-- active_sessions._INSERT_RUN
INSERT INTO agent_runs (tenant_id, agent_id, run_id, session_id_before, session_id_after,
                        carried, kind, render_time, recorded_at)
VALUES (%(tenant_id)s, %(agent_id)s, %(run_id)s, %(before)s, %(after)s, %(carried)s,
        %(kind)s, %(render_time)s,
        greatest(clock_timestamp(), %(floor)s::timestamptz + interval '1 microsecond'))
ON CONFLICT (tenant_id, agent_id, run_id) DO NOTHING
RETURNING recorded_at

-- active_sessions._LIST_RUNS
SELECT run_id, session_id_before, session_id_after, carried, recorded_at, kind, render_time
  FROM agent_runs
WHERE tenant_id = %(tenant_id)s AND agent_id = %(agent_id)s
  AND (%(at)s::timestamptz IS NULL OR (recorded_at, run_id) < (%(at)s, %(run_id)s::text))
ORDER BY recorded_at DESC, run_id DESC
LIMIT %(limit)s

-- active_sessions._RESET
INSERT INTO active_sessions (tenant_id, agent_id, session_id, session_updated_at,
                             last_reset_at, updated_at)
VALUES (%(tenant_id)s, %(agent_id)s, NULL, NULL, clock_timestamp(), clock_timestamp())
ON CONFLICT (tenant_id, agent_id) DO UPDATE
SET session_id = NULL, session_updated_at = NULL,
    last_reset_at = greatest(clock_timestamp(),
                             active_sessions.session_updated_at + interval '1 microsecond'),
    updated_at = clock_timestamp()
RETURNING session_id, session_updated_at, last_reset_at

-- active_sessions._RUNS_SINCE
SELECT count(*) AS n FROM agent_runs
WHERE tenant_id = %(tenant_id)s AND agent_id = %(agent_id)s AND carried
  AND kind = 'scheduled' AND recorded_at > %(anchor)s

-- agents._GET
SELECT agent_id, memory_enabled, updated_at, active_memory_enabled, review_decisions, expiry_slide
  FROM agent_settings
WHERE tenant_id = %(tenant_id)s AND agent_id = %(agent_id)s

-- agents._GET_LOCKED
SELECT agent_id, memory_enabled, updated_at, active_memory_enabled, review_decisions, expiry_slide
  FROM agent_settings
WHERE tenant_id = %(tenant_id)s AND agent_id = %(agent_id)s
FOR UPDATE

-- agents._GET_WORKSPACE
SELECT workspace_id, expiry_slide, updated_at FROM workspace_settings
WHERE tenant_id = %(tenant_id)s AND workspace_id = %(workspace_id)s

-- agents._GET_WORKSPACE_LOCKED
SELECT workspace_id, expiry_slide, updated_at FROM workspace_settings
WHERE tenant_id = %(tenant_id)s AND workspace_id = %(workspace_id)s
FOR UPDATE

-- agents._PUT
INSERT INTO agent_settings (tenant_id,
  agent_id,
  memory_enabled,
  updated_by,
  active_memory_enabled,
  review_decisions,
  expiry_slide)
VALUES (%(tenant_id)s::text,
  %(agent_id)s::text,
  coalesce(%(memory_enabled)s::bool, false),
  %(actor)s,
  coalesce(%(active_memory_enabled)s::bool, false),
  coalesce(%(review_decisions)s::bool, false),
  coalesce(%(expiry_slide)s::INTERVAL, '0'))
ON CONFLICT (tenant_id, agent_id) DO UPDATE
SET memory_enabled = excluded.memory_enabled,
  active_memory_enabled = excluded.active_memory_enabled,
  review_decisions = excluded.review_decisions,
  expiry_slide = excluded.expiry_slide,
  updated_by = excluded.updated_by,
  updated_at = clock_timestamp()
RETURNING agent_id,
  memory_enabled,
  updated_at,
  active_memory_enabled,
  review_decisions,
  expiry_slide

-- agents._PUT_WORKSPACE
INSERT INTO workspace_settings (tenant_id, workspace_id, expiry_slide, updated_by)
VALUES (%(tenant_id)s::text,
  %(workspace_id)s::text,
  coalesce(%(expiry_slide)s::INTERVAL, '0'),
  %(actor)s)
ON CONFLICT (tenant_id, workspace_id) DO UPDATE
SET expiry_slide = excluded.expiry_slide,
  updated_by = excluded.updated_by,
  updated_at = clock_timestamp()
RETURNING workspace_id, expiry_slide, updated_at

-- blocks._CREATE
WITH written AS (
    INSERT INTO blocks (tenant_id,
      user_id,
      scope,
      agent_id,
      label,
      content,
      version,
      created_at,
      updated_at)
    VALUES (%(tenant_id)s::text,
      %(user_id)s::text,
      %(scope)s::text,
      %(agent_id)s::text,
      %(label)s::text,
      %(content)s::text,
      1,
      statement_timestamp(),
      statement_timestamp())
    ON CONFLICT (tenant_id, user_id, scope, agent_id, label) DO NOTHING
    RETURNING *
),
current AS (
    SELECT * FROM blocks AS b WHERE b.tenant_id = %(tenant_id)s AND b.user_id = %(user_id)s
      AND b.scope = %(scope)s AND b.agent_id = %(agent_id)s AND b.label = %(label)s
),

-- blocks._DELETE
WITH current AS (
    SELECT * FROM blocks AS b WHERE b.tenant_id = %(tenant_id)s AND b.user_id = %(user_id)s
      AND b.scope = %(scope)s AND b.agent_id = %(agent_id)s AND b.label = %(label)s
    FOR UPDATE
),
gone AS (
    DELETE FROM blocks AS b
    USING current AS c
    WHERE b.tenant_id = %(tenant_id)s AND b.user_id = %(user_id)s
      AND b.scope = %(scope)s AND b.agent_id = %(agent_id)s AND b.label = %(label)s
      AND (%(expected)s::timestamptz IS NULL OR c.updated_at = %(expected)s::timestamptz)
    RETURNING b.*
),
lines_gone AS (
    DELETE FROM archival_lines AS l
    USING gone AS g
    WHERE l.tenant_id = %(tenant_id)s AND l.user_id = %(user_id)s
      AND l.scope = %(scope)s AND l.agent_id = %(agent_id)s AND g.label = 'archival'
),
vocabulary_gone AS (
    DELETE FROM archival_vocabulary AS v
    USING gone AS g
    WHERE v.tenant_id = %(tenant_id)s AND v.user_id = %(user_id)s
      AND v.scope = %(scope)s AND v.agent_id = %(agent_id)s AND g.label = 'archival'
),
terms_gone AS (
    DELETE FROM archival_terms AS t
    USING gone AS g
    WHERE t.tenant_id = %(tenant_id)s AND t.user_id = %(user_id)s
      AND t.scope = %(scope)s AND t.agent_id = %(agent_id)s AND g.label = 'archival'
)
SELECT EXISTS (
  SELECT
  FROM gone) AS deleted,
  c.scope,
  c.agent_id,
  c.label,
  c.content,
  c.version,
  c.created_at,
  c.updated_at,
  0 AS indexed_line_count
FROM current AS c

-- blocks._GET
SELECT b.scope,
  b.agent_id,
  b.label,
  b.content,
  b.version,
  b.created_at,
  b.updated_at,
  CASE WHEN b.label = 'archival' THEN (
        SELECT count(*) FROM (
            SELECT FROM archival_lines AS l
            WHERE l.tenant_id = %(tenant_id)s AND l.user_id = b.user_id
      AND l.scope = b.scope AND l.agent_id = b.agent_id AND l.embedding_model = %(index_model)s AND l.embedded_hash = hashtextextended(l.content,
        0) AND l.embedding IS NOT NULL
            LIMIT 100000) AS x
    ) ELSE 0 END AS indexed_line_count
      FROM blocks AS b
      WHERE b.tenant_id = %(tenant_id)s AND b.user_id = %(user_id)s
      AND b.scope = %(scope)s AND b.agent_id = %(agent_id)s AND b.label = %(label)s

-- blocks._GET_AT
SELECT x.scope,
  x.agent_id,
  x.label,
  x.content,
  x.version,
  x.created_at,
  x.updated_at,
  0 AS indexed_line_count,
  x.pruned
FROM (
    SELECT b.tenant_id, b.user_id, b.scope, b.agent_id, b.label,
           coalesce(v.content, '') AS content, coalesce(v.version, 0) AS version,
           b.created_at, coalesce(v.written_at, b.created_at) AS updated_at,
           v.version IS NULL AS pruned
    FROM blocks AS b
    LEFT JOIN LATERAL (
        SELECT v.version, v.content, v.written_at FROM block_versions AS v
        WHERE v.tenant_id = %(tenant_id)s AND v.user_id = b.user_id
      AND v.scope = b.scope AND v.agent_id = b.agent_id AND v.label = b.label AND v.written_at <= %(as_of)s
        ORDER BY v.version DESC LIMIT 1
    ) AS v ON true
    WHERE b.tenant_id = %(tenant_id)s AND b.user_id = %(user_id)s
      AND b.scope = %(scope)s AND b.agent_id = %(agent_id)s AND b.label = %(label)s AND b.created_at <= %(as_of)s
) AS x

-- blocks._REPLACE
WITH current AS (
    SELECT * FROM blocks AS b WHERE b.tenant_id = %(tenant_id)s AND b.user_id = %(user_id)s
      AND b.scope = %(scope)s AND b.agent_id = %(agent_id)s AND b.label = %(label)s
    FOR UPDATE
),
written AS (
    UPDATE blocks AS b
    SET content = %(content)s, version = c.version + 1,
        updated_at = greatest(clock_timestamp(), c.updated_at + interval '1 microsecond')
    FROM current AS c
    WHERE b.tenant_id = %(tenant_id)s AND b.user_id = %(user_id)s
      AND b.scope = %(scope)s AND b.agent_id = %(agent_id)s AND b.label = %(label)s AND c.updated_at = %(expected)s
    RETURNING b.*
),
pruned AS (
    DELETE FROM block_versions AS v
    WHERE v.tenant_id = %(tenant_id)s AND v.user_id = %(user_id)s
      AND v.scope = %(scope)s AND v.agent_id = %(agent_id)s AND v.label = %(label)s
      AND v.version <= (
          SELECT max(o.version) FROM (
              SELECT o.version FROM block_versions AS o
              WHERE o.tenant_id = %(tenant_id)s AND o.user_id = %(user_id)s
      AND o.scope = %(scope)s AND o.agent_id = %(agent_id)s AND o.label = %(label)s AND o.version <= (
        SELECT version
        FROM written) - %(keep)s
              ORDER BY o.version LIMIT 8) AS o)
      AND v.written_at < statement_timestamp() - %(kept)s::interval
      AND (SELECT n.written_at FROM block_versions AS n
           WHERE n.tenant_id = %(tenant_id)s AND n.user_id = %(user_id)s
      AND n.scope = %(scope)s AND n.agent_id = %(agent_id)s AND n.label = %(label)s AND n.version > v.version
           ORDER BY n.version LIMIT 1) < statement_timestamp() - %(kept)s::interval
),

-- blocks._SELECT
SELECT b.scope,
  b.agent_id,
  b.label,
  b.content,
  b.version,
  b.created_at,
  b.updated_at,
  CASE WHEN b.label = 'archival' THEN (
        SELECT count(*) FROM (
            SELECT FROM archival_lines AS l
            WHERE l.tenant_id = %(tenant_id)s AND l.user_id = b.user_id
      AND l.scope = b.scope AND l.agent_id = b.agent_id AND l.embedding_model = %(index_model)s AND l.embedded_hash = hashtextextended(l.content,
        0) AND l.embedding IS NOT NULL
            LIMIT 100000) AS x
    ) ELSE 0 END AS indexed_line_count FROM blocks AS b
WHERE tenant_id = %(tenant_id)s
  AND ((user_id = %(user_id)s
        AND ((scope = 'user' AND %(users)s)
             OR (scope = 'agent' AND %(agents)s
                 AND (%(agent_id)s = '' OR agent_id = %(agent_id)s))))
       OR (user_id = '' AND scope = 'workspace' AND %(workspaces)s
           AND agent_id = %(workspace_id)s))
ORDER BY scope = 'workspace', scope = 'agent', agent_id, label = 'archival'

-- blocks._VERSIONS
SELECT v.version, v.content, v.char_count, v.writer_user_id, v.written_at
FROM blocks AS b
LEFT JOIN LATERAL (
    SELECT * FROM block_versions AS v
    WHERE v.tenant_id = %(tenant_id)s AND v.user_id = b.user_id
      AND v.scope = b.scope AND v.agent_id = b.agent_id AND v.label = b.label
      AND (%(before)s::bigint IS NULL OR v.version < %(before)s::bigint)
    ORDER BY v.version DESC
    LIMIT %(limit)s
) AS v ON true
WHERE b.tenant_id = %(tenant_id)s AND b.user_id = %(user_id)s
      AND b.scope = %(scope)s AND b.agent_id = %(agent_id)s AND b.label = %(label)s
ORDER BY v.version DESC

-- blocks._WRITES[False, BlockLabel.ARCHIVAL]
WITH written AS(
  INSERT INTO blocks(tenant_id,user_id,scope,agent_id,label,content,version,created_at,updated_at)
  VALUES(%(tenant_id)s::text,
  %(user_id)s::text,
  %(scope)s::text,
  %(agent_id)s::text,
  %(label)s::text,
  %(content)s::text,
  1,
  statement_timestamp(),
  statement_timestamp())
  ON CONFLICT(tenant_id,user_id,scope,agent_id,label)DO NOTHING
  RETURNING *),current AS(
  SELECT*FROM blocks AS b
  WHERE b.tenant_id=%(tenant_id)s AND b.user_id=%(user_id)s AND b.scope=%(scope)s AND b.agent_id=%(agent_id)s AND b.label=%(label)s),
  kept AS(
  INSERT INTO block_versions(tenant_id,
  user_id,
  scope,
  agent_id,
  label,
  version,
  content,
  char_count,
  writer_user_id,
  written_at)
  SELECT tenant_id,
  user_id,
  scope,
  agent_id,
  label,
  version,
  content,
  %(char_count)s,
  %(writer_user_id)s,
  updated_at
  FROM written),embedded AS(
  SELECT DISTINCT ON(o.content)o.content,o.embedding,o.embedding_model,o.embedded_hash
  FROM archival_lines AS o
  WHERE o.tenant_id=%(tenant_id)s AND o.user_id=%(user_id)s AND o.scope=%(scope)s AND o.agent_id=%(agent_id)s AND o.embedding IS NOT NULL AND o.embedded_hash=hashtextextended(o.content,
  0)
  ORDER BY o.content,o.embedding_model IS NOT DISTINCT
  FROM %(index_model)s DESC),lines_gone AS(
  DELETE
  FROM archival_lines AS l USING written AS w
  WHERE l.tenant_id=%(tenant_id)s AND l.user_id=%(user_id)s AND l.scope=%(scope)s AND l.agent_id=%(agent_id)s AND l.line_number <> ALL(%(line_numbers)s::integer[])),
  lines_put AS(
  INSERT INTO archival_lines AS l(tenant_id,
  user_id,
  scope,
  agent_id,
  line_number,
  ordinal,
  content,
  embedding,
  embedding_model,
  embedded_hash)
  SELECT w.tenant_id,
  w.user_id,
  w.scope,
  w.agent_id,
  x.line_number,
  x.ordinal,
  x.content,
  e.embedding,
  e.embedding_model,
  e.embedded_hash
  FROM written AS w
  CROSS
  JOIN unnest(%(line_numbers)s::integer[],
  %(line_contents)s::text[])WITH ORDINALITY AS x(line_number,
  content,
  ordinal)
  LEFT
  JOIN embedded AS e ON e.content=x.content
  ON CONFLICT(tenant_id,user_id,scope,agent_id,line_number)DO UPDATE
  SET content=excluded.content,
  ordinal=excluded.ordinal,
  embedding=excluded.embedding,
  embedding_model=excluded.embedding_model,
  embedded_hash=excluded.embedded_hash,
  index_lease_until=NULL
  WHERE l.content IS DISTINCT
  FROM excluded.content OR l.ordinal <> excluded.ordinal),analysed AS(
  SELECT t.line,t.ordinal,to_tsvector('english',t.line)AS lexemes
  FROM unnest(%(line_contents)s::text[])WITH ORDINALITY AS t(line,ordinal)),speaking AS(
  SELECT s.name
  FROM(
  SELECT substring(a.line
  FROM %(speaker_pattern)s)AS name
  FROM analysed AS a)AS s
  WHERE s.name IS NOT NULL
  GROUP BY s.name HAVING count(*)>= 2),vocabulary AS(
  INSERT INTO archival_vocabulary(tenant_id,user_id,scope,agent_id,line_count,lexeme_total,speakers)
  SELECT w.tenant_id,w.user_id,w.scope,w.agent_id,(
  SELECT count(*)
  FROM analysed),(
  SELECT coalesce(sum(length(a.lexemes)),0)
  FROM analysed AS a),coalesce((
  SELECT array_agg(name
  ORDER BY name)
  FROM speaking),'{}')
  FROM written AS w
  ON CONFLICT(tenant_id,user_id,scope,agent_id)DO UPDATE
  SET line_count=excluded.line_count,lexeme_total=excluded.lexeme_total,speakers=excluded.speakers),
  terms AS(
  SELECT u.lexeme,count(*)AS lines,array_agg(a.ordinal
  ORDER BY a.ordinal)AS ordinals
  FROM analysed AS a,unnest(a.lexemes)AS u
  GROUP BY u.lexeme),terms_gone AS(
  DELETE
  FROM archival_terms AS t USING written AS w
  WHERE t.tenant_id=%(tenant_id)s AND t.user_id=%(user_id)s AND t.scope=%(scope)s AND t.agent_id=%(agent_id)s AND t.lexeme NOT IN(
  SELECT lexeme
  FROM terms)),terms_put AS(
  INSERT INTO archival_terms AS t(tenant_id,user_id,scope,agent_id,lexeme,lines,ordinals)
  SELECT w.tenant_id,w.user_id,w.scope,w.agent_id,x.lexeme,x.lines,x.ordinals
  FROM written AS w,terms AS x
  ON CONFLICT(tenant_id,user_id,scope,agent_id,lexeme)DO UPDATE
  SET lines=excluded.lines,ordinals=excluded.ordinals
  WHERE t.ordinals <> excluded.ordinals)
  SELECT true AS written,w.scope,w.agent_id,w.label,w.content,w.version,w.created_at,w.updated_at,(
  SELECT count(*)
  FROM unnest(%(line_contents)s::text[])AS t(line)
  JOIN embedded AS e ON e.content=t.line
  WHERE e.embedding_model=%(index_model)s)AS indexed_line_count
  FROM written AS w
  UNION ALL
  SELECT false,
  c.scope,
  c.agent_id,
  c.label,
  c.content,
  c.version,
  c.created_at,
  c.updated_at,
  CASE WHEN c.label='archival' THEN(
  SELECT count(*)
  FROM(
  SELECT
  FROM archival_lines AS l
  WHERE l.tenant_id=%(tenant_id)s AND l.user_id=c.user_id AND l.scope=c.scope AND l.agent_id=c.agent_id AND l.embedding_model=%(index_model)s AND l.embedded_hash=hashtextextended(l.content,
  0)AND l.embedding IS NOT NULL
  LIMIT 100000)AS x)ELSE 0 END AS indexed_line_count
  FROM current AS c
  WHERE NOT EXISTS(
  SELECT
  FROM written)

-- blocks._WRITES[False, BlockLabel.CORE]
WITH written AS(
  INSERT INTO blocks(tenant_id,user_id,scope,agent_id,label,content,version,created_at,updated_at)
  VALUES(%(tenant_id)s::text,
  %(user_id)s::text,
  %(scope)s::text,
  %(agent_id)s::text,
  %(label)s::text,
  %(content)s::text,
  1,
  statement_timestamp(),
  statement_timestamp())
  ON CONFLICT(tenant_id,user_id,scope,agent_id,label)DO NOTHING
  RETURNING *),current AS(
  SELECT*FROM blocks AS b
  WHERE b.tenant_id=%(tenant_id)s AND b.user_id=%(user_id)s AND b.scope=%(scope)s AND b.agent_id=%(agent_id)s AND b.label=%(label)s),
  kept AS(
  INSERT INTO block_versions(tenant_id,
  user_id,
  scope,
  agent_id,
  label,
  version,
  content,
  char_count,
  writer_user_id,
  written_at)
  SELECT tenant_id,
  user_id,
  scope,
  agent_id,
  label,
  version,
  content,
  %(char_count)s,
  %(writer_user_id)s,
  updated_at
  FROM written)
  SELECT true AS written,
  w.scope,
  w.agent_id,
  w.label,
  w.content,
  w.version,
  w.created_at,
  w.updated_at,
  0 AS indexed_line_count
  FROM written AS w
  UNION ALL
  SELECT false,
  c.scope,
  c.agent_id,
  c.label,
  c.content,
  c.version,
  c.created_at,
  c.updated_at,
  CASE WHEN c.label='archival' THEN(
  SELECT count(*)
  FROM(
  SELECT
  FROM archival_lines AS l
  WHERE l.tenant_id=%(tenant_id)s AND l.user_id=c.user_id AND l.scope=c.scope AND l.agent_id=c.agent_id AND l.embedding_model=%(index_model)s AND l.embedded_hash=hashtextextended(l.content,
  0)AND l.embedding IS NOT NULL
  LIMIT 100000)AS x)ELSE 0 END AS indexed_line_count
  FROM current AS c
  WHERE NOT EXISTS(
  SELECT
  FROM written)

-- blocks._WRITES[True, BlockLabel.ARCHIVAL]
WITH current AS(
  SELECT*FROM blocks AS b
  WHERE b.tenant_id=%(tenant_id)s AND b.user_id=%(user_id)s AND b.scope=%(scope)s AND b.agent_id=%(agent_id)s AND b.label=%(label)s FOR UPDATE),
  written AS(UPDATE blocks AS b
  SET content=%(content)s,
  version=c.version + 1,
  updated_at=greatest(clock_timestamp(),c.updated_at + interval '1 microsecond')
  FROM current AS c
  WHERE b.tenant_id=%(tenant_id)s AND b.user_id=%(user_id)s AND b.scope=%(scope)s AND b.agent_id=%(agent_id)s AND b.label=%(label)s AND c.updated_at=%(expected)s
  RETURNING b.*),pruned AS(
  DELETE
  FROM block_versions AS v
  WHERE v.tenant_id=%(tenant_id)s AND v.user_id=%(user_id)s AND v.scope=%(scope)s AND v.agent_id=%(agent_id)s AND v.label=%(label)s AND v.version <=(
  SELECT max(o.version)
  FROM(
  SELECT o.version
  FROM block_versions AS o
  WHERE o.tenant_id=%(tenant_id)s AND o.user_id=%(user_id)s AND o.scope=%(scope)s AND o.agent_id=%(agent_id)s AND o.label=%(label)s AND o.version <=(
  SELECT version
  FROM written)- %(keep)s
  ORDER BY o.version
  LIMIT 8)AS o)AND v.written_at<statement_timestamp()- %(kept)s::interval AND(
  SELECT n.written_at
  FROM block_versions AS n
  WHERE n.tenant_id=%(tenant_id)s AND n.user_id=%(user_id)s AND n.scope=%(scope)s AND n.agent_id=%(agent_id)s AND n.label=%(label)s AND n.version>v.version
  ORDER BY n.version
  LIMIT 1)<statement_timestamp()- %(kept)s::interval),kept AS(
  INSERT INTO block_versions(tenant_id,
  user_id,
  scope,
  agent_id,
  label,
  version,
  content,
  char_count,
  writer_user_id,
  written_at)
  SELECT tenant_id,
  user_id,
  scope,
  agent_id,
  label,
  version,
  content,
  %(char_count)s,
  %(writer_user_id)s,
  updated_at
  FROM written),embedded AS(
  SELECT DISTINCT ON(o.content)o.content,o.embedding,o.embedding_model,o.embedded_hash
  FROM archival_lines AS o
  WHERE o.tenant_id=%(tenant_id)s AND o.user_id=%(user_id)s AND o.scope=%(scope)s AND o.agent_id=%(agent_id)s AND o.embedding IS NOT NULL AND o.embedded_hash=hashtextextended(o.content,
  0)
  ORDER BY o.content,o.embedding_model IS NOT DISTINCT
  FROM %(index_model)s DESC),lines_gone AS(
  DELETE
  FROM archival_lines AS l USING written AS w
  WHERE l.tenant_id=%(tenant_id)s AND l.user_id=%(user_id)s AND l.scope=%(scope)s AND l.agent_id=%(agent_id)s AND l.line_number <> ALL(%(line_numbers)s::integer[])),
  lines_put AS(
  INSERT INTO archival_lines AS l(tenant_id,
  user_id,
  scope,
  agent_id,
  line_number,
  ordinal,
  content,
  embedding,
  embedding_model,
  embedded_hash)
  SELECT w.tenant_id,
  w.user_id,
  w.scope,
  w.agent_id,
  x.line_number,
  x.ordinal,
  x.content,
  e.embedding,
  e.embedding_model,
  e.embedded_hash
  FROM written AS w
  CROSS
  JOIN unnest(%(line_numbers)s::integer[],
  %(line_contents)s::text[])WITH ORDINALITY AS x(line_number,
  content,
  ordinal)
  LEFT
  JOIN embedded AS e ON e.content=x.content
  ON CONFLICT(tenant_id,user_id,scope,agent_id,line_number)DO UPDATE
  SET content=excluded.content,
  ordinal=excluded.ordinal,
  embedding=excluded.embedding,
  embedding_model=excluded.embedding_model,
  embedded_hash=excluded.embedded_hash,
  index_lease_until=NULL
  WHERE l.content IS DISTINCT
  FROM excluded.content OR l.ordinal <> excluded.ordinal),analysed AS(
  SELECT t.line,t.ordinal,to_tsvector('english',t.line)AS lexemes
  FROM unnest(%(line_contents)s::text[])WITH ORDINALITY AS t(line,ordinal)),speaking AS(
  SELECT s.name
  FROM(
  SELECT substring(a.line
  FROM %(speaker_pattern)s)AS name
  FROM analysed AS a)AS s
  WHERE s.name IS NOT NULL
  GROUP BY s.name HAVING count(*)>= 2),vocabulary AS(
  INSERT INTO archival_vocabulary(tenant_id,user_id,scope,agent_id,line_count,lexeme_total,speakers)
  SELECT w.tenant_id,w.user_id,w.scope,w.agent_id,(
  SELECT count(*)
  FROM analysed),(
  SELECT coalesce(sum(length(a.lexemes)),0)
  FROM analysed AS a),coalesce((
  SELECT array_agg(name
  ORDER BY name)
  FROM speaking),'{}')
  FROM written AS w
  ON CONFLICT(tenant_id,user_id,scope,agent_id)DO UPDATE
  SET line_count=excluded.line_count,lexeme_total=excluded.lexeme_total,speakers=excluded.speakers),
  terms AS(
  SELECT u.lexeme,count(*)AS lines,array_agg(a.ordinal
  ORDER BY a.ordinal)AS ordinals
  FROM analysed AS a,unnest(a.lexemes)AS u
  GROUP BY u.lexeme),terms_gone AS(
  DELETE
  FROM archival_terms AS t USING written AS w
  WHERE t.tenant_id=%(tenant_id)s AND t.user_id=%(user_id)s AND t.scope=%(scope)s AND t.agent_id=%(agent_id)s AND t.lexeme NOT IN(
  SELECT lexeme
  FROM terms)),terms_put AS(
  INSERT INTO archival_terms AS t(tenant_id,user_id,scope,agent_id,lexeme,lines,ordinals)
  SELECT w.tenant_id,w.user_id,w.scope,w.agent_id,x.lexeme,x.lines,x.ordinals
  FROM written AS w,terms AS x
  ON CONFLICT(tenant_id,user_id,scope,agent_id,lexeme)DO UPDATE
  SET lines=excluded.lines,ordinals=excluded.ordinals
  WHERE t.ordinals <> excluded.ordinals)
  SELECT true AS written,w.scope,w.agent_id,w.label,w.content,w.version,w.created_at,w.updated_at,(
  SELECT count(*)
  FROM unnest(%(line_contents)s::text[])AS t(line)
  JOIN embedded AS e ON e.content=t.line
  WHERE e.embedding_model=%(index_model)s)AS indexed_line_count
  FROM written AS w
  UNION ALL
  SELECT false,
  c.scope,
  c.agent_id,
  c.label,
  c.content,
  c.version,
  c.created_at,
  c.updated_at,
  CASE WHEN c.label='archival' THEN(
  SELECT count(*)
  FROM(
  SELECT
  FROM archival_lines AS l
  WHERE l.tenant_id=%(tenant_id)s AND l.user_id=c.user_id AND l.scope=c.scope AND l.agent_id=c.agent_id AND l.embedding_model=%(index_model)s AND l.embedded_hash=hashtextextended(l.content,
  0)AND l.embedding IS NOT NULL
  LIMIT 100000)AS x)ELSE 0 END AS indexed_line_count
  FROM current AS c
  WHERE NOT EXISTS(
  SELECT
  FROM written)

-- blocks._WRITES[True, BlockLabel.CORE]
WITH current AS(
  SELECT*FROM blocks AS b
  WHERE b.tenant_id=%(tenant_id)s AND b.user_id=%(user_id)s AND b.scope=%(scope)s AND b.agent_id=%(agent_id)s AND b.label=%(label)s FOR UPDATE),
  written AS(UPDATE blocks AS b
  SET content=%(content)s,
  version=c.version + 1,
  updated_at=greatest(clock_timestamp(),c.updated_at + interval '1 microsecond')
  FROM current AS c
  WHERE b.tenant_id=%(tenant_id)s AND b.user_id=%(user_id)s AND b.scope=%(scope)s AND b.agent_id=%(agent_id)s AND b.label=%(label)s AND c.updated_at=%(expected)s
  RETURNING b.*),pruned AS(
  DELETE
  FROM block_versions AS v
  WHERE v.tenant_id=%(tenant_id)s AND v.user_id=%(user_id)s AND v.scope=%(scope)s AND v.agent_id=%(agent_id)s AND v.label=%(label)s AND v.version <=(
  SELECT max(o.version)
  FROM(
  SELECT o.version
  FROM block_versions AS o
  WHERE o.tenant_id=%(tenant_id)s AND o.user_id=%(user_id)s AND o.scope=%(scope)s AND o.agent_id=%(agent_id)s AND o.label=%(label)s AND o.version <=(
  SELECT version
  FROM written)- %(keep)s
  ORDER BY o.version
  LIMIT 8)AS o)AND v.written_at<statement_timestamp()- %(kept)s::interval AND(
  SELECT n.written_at
  FROM block_versions AS n
  WHERE n.tenant_id=%(tenant_id)s AND n.user_id=%(user_id)s AND n.scope=%(scope)s AND n.agent_id=%(agent_id)s AND n.label=%(label)s AND n.version>v.version
  ORDER BY n.version
  LIMIT 1)<statement_timestamp()- %(kept)s::interval),kept AS(
  INSERT INTO block_versions(tenant_id,
  user_id,
  scope,
  agent_id,
  label,
  version,
  content,
  char_count,
  writer_user_id,
  written_at)
  SELECT tenant_id,
  user_id,
  scope,
  agent_id,
  label,
  version,
  content,
  %(char_count)s,
  %(writer_user_id)s,
  updated_at
  FROM written)
  SELECT true AS written,
  w.scope,
  w.agent_id,
  w.label,
  w.content,
  w.version,
  w.created_at,
  w.updated_at,
  0 AS indexed_line_count
  FROM written AS w
  UNION ALL
  SELECT false,
  c.scope,
  c.agent_id,
  c.label,
  c.content,
  c.version,
  c.created_at,
  c.updated_at,
  CASE WHEN c.label='archival' THEN(
  SELECT count(*)
  FROM(
  SELECT
  FROM archival_lines AS l
  WHERE l.tenant_id=%(tenant_id)s AND l.user_id=c.user_id AND l.scope=c.scope AND l.agent_id=c.agent_id AND l.embedding_model=%(index_model)s AND l.embedded_hash=hashtextextended(l.content,
  0)AND l.embedding IS NOT NULL
  LIMIT 100000)AS x)ELSE 0 END AS indexed_line_count
  FROM current AS c
  WHERE NOT EXISTS(
  SELECT
  FROM written)

-- conversations._GET
SELECT provider,
  conversation_id,
  messages,
  message_count,
  created_at,
  updated_at,
  raw_events,
  raw_event_count
  FROM conversations
  WHERE
tenant_id = %(tenant_id)s AND provider = %(provider)s AND conversation_id = %(conversation_id)s

-- conversations._GROUNDED
SELECT DISTINCT g.message_position AS position
FROM memory_groundings AS g
JOIN memories AS m ON m.tenant_id = %(tenant_id)s AND m.id = g.memory_id
WHERE g.tenant_id = %(tenant_id)s AND (m.expire_time IS NULL OR m.expire_time > now())
  AND m.conversation_provider = %(provider)s AND m.conversation_id = %(conversation_id)s
  AND (%(writer)s::uuid IS NULL OR g.memory_id <> %(writer)s::uuid)

  AND g.message_position = ANY (%(positions)s::int[])
  AND (g.raw_event_index IS NULL OR g.message_position <> 0 OR g.start_character <> 0
       OR g.end_character <> 0)

-- conversations._GROUNDED_RAW
SELECT DISTINCT g.raw_event_index AS position
FROM memory_groundings AS g
JOIN memories AS m ON m.tenant_id = %(tenant_id)s AND m.id = g.memory_id
WHERE g.tenant_id = %(tenant_id)s AND (m.expire_time IS NULL OR m.expire_time > now())
  AND m.conversation_provider = %(provider)s AND m.conversation_id = %(conversation_id)s
  AND (%(writer)s::uuid IS NULL OR g.memory_id <> %(writer)s::uuid)
  AND g.raw_event_index = ANY (%(positions)s::int[])

-- conversations._INSERT
INSERT INTO conversations (tenant_id,
  provider,
  conversation_id,
  messages,
  message_count,
  raw_events,
  raw_event_count)
VALUES (%(tenant_id)s::text,
  %(provider)s::text,
  %(conversation_id)s::text,
  %(messages)s::JSONB,
  %(message_count)s::INTEGER,
  coalesce(%(raw_events)s::JSONB, '[]'::jsonb),
  coalesce(%(raw_event_count)s::INTEGER, 0))
ON CONFLICT (tenant_id, provider, conversation_id) DO NOTHING

-- conversations._LOCK
SELECT message_count FROM conversations WHERE
tenant_id = %(tenant_id)s AND provider = %(provider)s AND conversation_id = %(conversation_id)s FOR UPDATE

-- conversations._LOST
SELECT (s.ordinal - 1)::int AS position, s.message
FROM conversations AS c
CROSS JOIN LATERAL jsonb_array_elements(c.messages) WITH ORDINALITY AS s(message, ordinal)
WHERE c.tenant_id = %(tenant_id)s AND c.provider = %(provider)s
  AND c.conversation_id = %(conversation_id)s
  AND (s.ordinal > %(message_count)s
       OR s.message ->> 'content'
          IS DISTINCT FROM %(messages)s::jsonb -> (s.ordinal::int - 1) ->> 'content')
ORDER BY s.ordinal

-- conversations._LOST_RAW
SELECT (s.ordinal - 1)::int AS position, s.event
FROM conversations AS c
CROSS JOIN LATERAL jsonb_array_elements_text(c.raw_events) WITH ORDINALITY AS s(event, ordinal)
WHERE c.tenant_id = %(tenant_id)s AND c.provider = %(provider)s
  AND c.conversation_id = %(conversation_id)s
  AND (s.ordinal > %(raw_event_count)s
       OR s.event IS DISTINCT FROM %(raw_events)s::jsonb ->> (s.ordinal::int - 1))
ORDER BY s.ordinal

-- conversations._PAGE_BASIC
SELECT provider,
  conversation_id,
  NULL::JSONB AS messages,
  message_count,
  created_at,
  updated_at,
  NULL::JSONB AS raw_events,
  raw_event_count
FROM conversations
WHERE tenant_id = %(tenant_id)s
  AND (%(after)s::boolean IS NOT TRUE
       OR (updated_at, provider, conversation_id)
          < (%(updated_at)s, %(provider)s, %(conversation_id)s))
ORDER BY updated_at DESC, provider DESC, conversation_id DESC
LIMIT %(limit)s

-- conversations._PAGE_FULL
SELECT provider,
  conversation_id,
  messages,
  message_count,
  created_at,
  updated_at,
  raw_events,
  raw_event_count
FROM conversations
WHERE tenant_id = %(tenant_id)s
  AND (%(after)s::boolean IS NOT TRUE
       OR (updated_at, provider, conversation_id)
          < (%(updated_at)s, %(provider)s, %(conversation_id)s))
ORDER BY updated_at DESC, provider DESC, conversation_id DESC
LIMIT %(limit)s

-- conversations._UPDATE
UPDATE conversations
SET messages = %(messages)s, message_count = %(message_count)s,
    raw_events = %(raw_events)s, raw_event_count = %(raw_event_count)s,
    updated_at = clock_timestamp()
WHERE
tenant_id = %(tenant_id)s AND provider = %(provider)s AND conversation_id = %(conversation_id)s
  AND (messages, raw_events) IS DISTINCT FROM (%(messages)s::jsonb, %(raw_events)s::jsonb)

-- database.INDEXING_OVERVIEW
SELECT (SELECT count(*) FROM (
            SELECT FROM archival_lines AS l
            WHERE true
              AND l.embedded_hash IS DISTINCT FROM hashtextextended(l.content, 0)
            LIMIT %(bound)s) AS x) AS lines,
       (SELECT count(*) FROM (
            SELECT FROM memories AS m
            WHERE true
              AND m.embedded_hash IS DISTINCT
                FROM hashtextextended(m.key || E'\n' || m.value,
                0) AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL
            LIMIT %(bound)s) AS x) AS memories,
       (SELECT count(*) FROM index_workers AS w
        WHERE w.model = %(model)s
          AND w.seen_at > now() - interval '30 seconds') AS workers,
       (SELECT coalesce(sum(w.per_second), 0) FROM index_workers AS w
        WHERE w.model = %(model)s
          AND w.seen_at > now() - interval '30 seconds') AS per_second

-- database.PGVECTOR_INSTALLED
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'vector') AS installed

-- database._NOW
SELECT clock_timestamp() AS now

-- decisions._FIND_BY_RUN
SELECT d.id,
  d.run_id,
  d.agent_id,
  d.card_type,
  d.action,
  d.summary,
  d.result,
  d.resolution_status,
  d.created_at,
  d.resolved_at,
    (SELECT r.conviction_score FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id
     ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS latest_conviction_score,
    (SELECT count(*) FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id) AS reexamination_count
       FROM decisions AS d
       WHERE d.tenant_id = %(tenant_id)s AND d.run_id = %(run_id)s

-- decisions._FIND_REEXAMINATION
SELECT id, parent_decision_id, run_id, conviction_score, notes, suggested_action, created_at
  FROM reexaminations
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s

-- decisions._GET
SELECT d.id,
  d.run_id,
  d.agent_id,
  d.card_type,
  d.action,
  d.summary,
  d.result,
  d.resolution_status,
  d.created_at,
  d.resolved_at,
    (SELECT r.conviction_score FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id
     ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS latest_conviction_score,
    (SELECT count(*) FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id) AS reexamination_count
       FROM decisions AS d
       WHERE d.tenant_id = %(tenant_id)s AND d.id = %(id)s

-- decisions._GETS
SELECT d.id,
  d.run_id,
  d.agent_id,
  d.card_type,
  d.action,
  d.summary,
  d.result,
  d.resolution_status,
  d.created_at,
  d.resolved_at,
    (SELECT r.conviction_score FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id
     ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS latest_conviction_score,
    (SELECT count(*) FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id) AS reexamination_count
       FROM decisions AS d
       WHERE d.tenant_id = %(tenant_id)s AND d.id = %(id)s

-- decisions._GETS['share']
SELECT d.id,
  d.run_id,
  d.agent_id,
  d.card_type,
  d.action,
  d.summary,
  d.result,
  d.resolution_status,
  d.created_at,
  d.resolved_at,
    (SELECT r.conviction_score FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id
     ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS latest_conviction_score,
    (SELECT count(*) FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id) AS reexamination_count
       FROM decisions AS d
       WHERE d.tenant_id = %(tenant_id)s AND d.id = %(id)s FOR SHARE OF d

-- decisions._GETS['update']
SELECT d.id,
  d.run_id,
  d.agent_id,
  d.card_type,
  d.action,
  d.summary,
  d.result,
  d.resolution_status,
  d.created_at,
  d.resolved_at,
    (SELECT r.conviction_score FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id
     ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS latest_conviction_score,
    (SELECT count(*) FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id) AS reexamination_count
       FROM decisions AS d
       WHERE d.tenant_id = %(tenant_id)s AND d.id = %(id)s FOR UPDATE OF d

-- decisions._GET_CARD_TYPE
SELECT name, re_examinable, actions, decision_actions, created_at, updated_at
  FROM card_types
  WHERE tenant_id = %(tenant_id)s AND name = %(name)s

-- decisions._INSERT
WITH d AS (
    INSERT INTO decisions (tenant_id,
      id,
      run_id,
      agent_id,
      card_type,
      action,
      summary,
      result,
      resolution_status,
      created_at)
    VALUES (%(tenant_id)s::text,
      %(id)s::UUID,
      %(run_id)s::text,
      %(agent_id)s::text,
      %(card_type)s::text,
      %(action)s::text,
      %(summary)s::text,
      %(result)s::JSONB,
      'open',
      clock_timestamp())
    ON CONFLICT (tenant_id, run_id) DO NOTHING
    RETURNING *
)
SELECT d.id,
  d.run_id,
  d.agent_id,
  d.card_type,
  d.action,
  d.summary,
  d.result,
  d.resolution_status,
  d.created_at,
  d.resolved_at,
  NULL::smallint AS latest_conviction_score,
       0 AS reexamination_count
FROM d

-- decisions._INSERT_REEXAMINATION
INSERT INTO reexaminations (tenant_id,
  id,
  parent_decision_id,
  run_id,
  conviction_score,
  notes,
  suggested_action,
  created_at)
VALUES (%(tenant_id)s::text,
  %(id)s::UUID,
  %(parent_decision_id)s::UUID,
  %(run_id)s::text,
  %(conviction_score)s::int2,
  %(notes)s::text,
  %(suggested_action)s::text,
  clock_timestamp())
ON CONFLICT (tenant_id, run_id) DO NOTHING
RETURNING id, parent_decision_id, run_id, conviction_score, notes, suggested_action, created_at

-- decisions._PUT_CARD_TYPE
INSERT INTO card_types (tenant_id,
  name,
  re_examinable,
  actions,
  decision_actions,
  created_at,
  updated_at)
VALUES (%(tenant_id)s::text,
  %(name)s::text,
  %(re_examinable)s::text,
  coalesce(%(actions)s::TEXT[], '{}'),
  coalesce(%(decision_actions)s::TEXT[], '{}'),
  statement_timestamp(),
  statement_timestamp())
ON CONFLICT (tenant_id, name) DO UPDATE
SET re_examinable = excluded.re_examinable, actions = excluded.actions,
    decision_actions = excluded.decision_actions, updated_at = clock_timestamp()
RETURNING name,
  re_examinable,
  actions,
  decision_actions,
  created_at,
  updated_at,
  created_at = updated_at AS created

-- decisions._RECENT[False]
SELECT d.id,
  d.run_id,
  d.agent_id,
  d.card_type,
  d.action,
  d.summary,
  NULL::JSONB AS result,
  d.resolution_status,
  d.created_at,
  d.resolved_at,
    (SELECT r.conviction_score FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id
     ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS latest_conviction_score,
    (SELECT count(*) FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id) AS reexamination_count
       FROM decisions AS d
WHERE d.tenant_id = %(tenant_id)s AND d.agent_id = %(agent_id)s
  AND (%(card_type)s::text IS NULL OR d.card_type = %(card_type)s)
ORDER BY d.created_at DESC, d.id DESC
LIMIT %(limit)s

-- decisions._RECENT[True]
SELECT d.id,
  d.run_id,
  d.agent_id,
  d.card_type,
  d.action,
  d.summary,
  d.result,
  d.resolution_status,
  d.created_at,
  d.resolved_at,
    (SELECT r.conviction_score FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id
     ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS latest_conviction_score,
    (SELECT count(*) FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id) AS reexamination_count
       FROM decisions AS d
WHERE d.tenant_id = %(tenant_id)s AND d.agent_id = %(agent_id)s
  AND (%(card_type)s::text IS NULL OR d.card_type = %(card_type)s)
ORDER BY d.created_at DESC, d.id DESC
LIMIT %(limit)s

-- decisions._REEXAMINATIONS
SELECT id, parent_decision_id, run_id, conviction_score, notes, suggested_action, created_at
  FROM reexaminations
WHERE tenant_id = %(tenant_id)s AND parent_decision_id = %(id)s
ORDER BY created_at, id

-- decisions._SET_RESOLUTION
UPDATE decisions
SET resolution_status = %(status)s::text,
    resolved_at = CASE WHEN %(status)s::text = 'open' THEN NULL ELSE clock_timestamp() END
WHERE tenant_id = %(tenant_id)s AND id = %(id)s

-- decisions._WITHOUT_RESULT
SELECT d.id,
  d.run_id,
  d.agent_id,
  d.card_type,
  d.action,
  d.summary,
  NULL::JSONB AS result,
  d.resolution_status,
  d.created_at,
  d.resolved_at,
    (SELECT r.conviction_score FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id
     ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS latest_conviction_score,
    (SELECT count(*) FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id) AS reexamination_count
       FROM decisions AS d

-- decisions._WITH_RESULT
SELECT d.id,
  d.run_id,
  d.agent_id,
  d.card_type,
  d.action,
  d.summary,
  d.result,
  d.resolution_status,
  d.created_at,
  d.resolved_at,
    (SELECT r.conviction_score FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id
     ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS latest_conviction_score,
    (SELECT count(*) FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id) AS reexamination_count
       FROM decisions AS d

-- distribution.DUE_TENANTS
SELECT tenant_id FROM extraction_jobs
WHERE
    ((status = 'queued' AND run_after <= now())
     OR (status = 'running' AND lease_until < now()))
GROUP BY tenant_id
ORDER BY min(run_after)
LIMIT %(tenants)s

-- distribution.EXPIRED_TENANTS
SELECT DISTINCT m.tenant_id FROM memories AS m WHERE m.expire_time <= now() LIMIT %(limit)s

-- distribution.HISTORY_CROSSED
SELECT e.tenant_id, e.memory_id, e.occurred_at, e.id, e.new_memory IS NULL AS gone
FROM memory_events AS e
WHERE (e.occurred_at, e.id) > (%(after_at)s, %(after_id)s)
  AND e.occurred_at < statement_timestamp() - %(kept)s::interval
ORDER BY e.occurred_at, e.id
LIMIT %(limit)s

-- distribution.INDEXING_OVERVIEW
SELECT (SELECT count(*) FROM (
            SELECT FROM archival_lines AS l
            WHERE true
              AND l.embedded_hash IS DISTINCT FROM hashtextextended(l.content, 0)
            LIMIT %(bound)s) AS x) AS lines,
       (SELECT count(*) FROM (
            SELECT FROM memories AS m
            WHERE true
              AND m.embedded_hash IS DISTINCT
                FROM hashtextextended(m.key || E'\n' || m.value,
                0) AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL
            LIMIT %(bound)s) AS x) AS memories,
       (SELECT count(*) FROM index_workers AS w
        WHERE w.model = %(model)s
          AND w.seen_at > now() - interval '30 seconds') AS workers,
       (SELECT coalesce(sum(w.per_second), 0) FROM index_workers AS w
        WHERE w.model = %(model)s
          AND w.seen_at > now() - interval '30 seconds') AS per_second

-- events._EVENTS
SELECT id, memory_id, event_type, actor_user_id, occurred_at, old_memory, new_memory, EXISTS (
    SELECT FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(memory_id)s AND m.expire_time <= now()
) AS expired
FROM memory_events
WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s

-- events._FIRST_PAGE
SELECT id, memory_id, event_type, actor_user_id, occurred_at, old_memory, new_memory, EXISTS (
    SELECT FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(memory_id)s AND m.expire_time <= now()
) AS expired
FROM memory_events
WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s
  ORDER BY occurred_at, id
  LIMIT %(limit)s

-- events._NEXT_PAGE
SELECT id, memory_id, event_type, actor_user_id, occurred_at, old_memory, new_memory, EXISTS (
    SELECT FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(memory_id)s AND m.expire_time <= now()
) AS expired
FROM memory_events
WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s
  AND (occurred_at, id) > (%(occurred_at)s, %(id)s) ORDER BY occurred_at, id LIMIT %(limit)s

-- forget._CONVERSATIONS_OF
SELECT conversation_provider AS provider, conversation_id
FROM memories
WHERE
tenant_id = %(tenant_id)s AND scope = %(scope)s AND owner_id = %(owner_id)s AND conversation_id IS NOT NULL
UNION
SELECT s.snapshot ->> 'conversation_provider', s.snapshot ->> 'conversation_id'
FROM memory_events AS e
CROSS JOIN LATERAL (VALUES (e.old_memory), (e.new_memory)) AS s(snapshot)
WHERE e.tenant_id = %(tenant_id)s AND (coalesce(e.new_memory,
  e.old_memory) ->> 'owner_id') = %(owner_id)s
  AND (coalesce(e.new_memory, e.old_memory) ->> 'scope') = %(scope)s
  AND s.snapshot ->> 'conversation_id' IS NOT NULL

-- forget._MEMORIES
WITH gone AS (DELETE FROM memories WHERE
tenant_id = %(tenant_id)s AND scope = %(scope)s AND owner_id = %(owner_id)s
  RETURNING tenant_id, id),
ended AS (
    INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id,
                               occurred_at, old_memory, new_memory)
    SELECT tenant_id, gen_random_uuid(), id, 'deleted', %(actor)s, clock_timestamp(),
           NULL, NULL
    FROM gone
)
SELECT count(*) AS n FROM gone

-- forget._REEXAMINATIONS_OF_AGENT
WITH gone AS (
    DELETE FROM reexaminations AS r
    USING decisions AS d
    WHERE r.tenant_id = %(tenant_id)s AND d.tenant_id = %(tenant_id)s
      AND d.id = r.parent_decision_id AND d.agent_id = %(agent_id)s
    RETURNING 1
)
SELECT count(*) AS n FROM gone

-- forget._TOMBSTONES
WITH emptied AS (
    UPDATE memory_events AS e
    SET old_memory = NULL, new_memory = NULL
    WHERE e.tenant_id = %(tenant_id)s AND (coalesce(e.new_memory,
      e.old_memory) ->> 'owner_id') = %(owner_id)s
      AND (coalesce(e.new_memory, e.old_memory) ->> 'scope') = %(scope)s
    RETURNING 1
)
SELECT count(*) AS n FROM emptied

-- forget._UNUSED_CONVERSATIONS
WITH gone AS (
    DELETE FROM conversations AS c
    USING unnest(%(providers)s::text[], %(conversation_ids)s::text[]) AS k(provider, id)
    WHERE c.tenant_id = %(tenant_id)s AND c.provider = k.provider
      AND c.conversation_id = k.id
      AND NOT EXISTS (
          SELECT FROM memories AS m
          WHERE m.tenant_id = %(tenant_id)s AND m.conversation_provider = c.provider
            AND m.conversation_id = c.conversation_id)
    RETURNING 1
)
SELECT count(*) AS n FROM gone

-- history.HISTORY_CROSSED
SELECT e.tenant_id, e.memory_id, e.occurred_at, e.id, e.new_memory IS NULL AS gone
FROM memory_events AS e
WHERE (e.occurred_at, e.id) > (%(after_at)s, %(after_id)s)
  AND e.occurred_at < statement_timestamp() - %(kept)s::interval
ORDER BY e.occurred_at, e.id
LIMIT %(limit)s

-- history.HISTORY_SWEEP_REACHED
INSERT INTO history_sweep AS h (swept_at, swept_id) VALUES (%(at)s, %(id)s)
ON CONFLICT (one) DO UPDATE SET swept_at = excluded.swept_at, swept_id = excluded.swept_id
WHERE (h.swept_at, h.swept_id) < (excluded.swept_at, excluded.swept_id)

-- history.HISTORY_SWEPT
SELECT swept_at, swept_id FROM history_sweep

-- history.PRUNE_EVENTS
DELETE FROM memory_events AS e
USING unnest(%(memory_ids)s::uuid[], %(ats)s::timestamptz[], %(ids)s::uuid[],
             %(gone)s::boolean[]) AS c(memory_id, occurred_at, id, gone)
WHERE e.tenant_id = %(tenant_id)s AND e.memory_id = c.memory_id
  AND ((e.occurred_at, e.id) < (c.occurred_at, c.id) OR (c.gone AND e.id = c.id))

-- indexing.BEAT
WITH gone AS (
    DELETE FROM index_workers WHERE seen_at < now() - interval '1 hour'
)
INSERT INTO index_workers AS w (worker, model, embedded, per_second)
VALUES (%(worker)s, %(model)s, %(embedded)s, %(per_second)s)
ON CONFLICT (worker) DO UPDATE
SET model = excluded.model, embedded = excluded.embedded, per_second = excluded.per_second,
    seen_at = now()

-- indexing.CLAIM_UNSCREENED
WITH due AS (
    SELECT m.ctid FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.superseded_by IS NULL AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value,
      0) AND m.text_by IS NULL AND m.screened_hash IS DISTINCT
      FROM hashtextextended(m.key || E'\n' || m.value,
      0) AND m.embedding_model = %(model)s AND (m.expire_time IS NULL OR m.expire_time > now())
      AND (m.index_lease_until IS NULL OR m.index_lease_until < now())
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE memories AS m SET index_lease_until = now() + %(lease)s
WHERE m.tenant_id = %(tenant_id)s AND m.ctid = ANY (ARRAY(SELECT ctid FROM due))
RETURNING m.tenant_id, m.id AS memory_id, m.key, m.value,
          hashtextextended(m.key || E'\n' || m.value, 0) AS text_hash, m.embedding::real[] AS vector

-- indexing.INDEXING_OVERVIEW
SELECT (SELECT count(*) FROM (
            SELECT FROM archival_lines AS l
            WHERE true
              AND l.embedded_hash IS DISTINCT FROM hashtextextended(l.content, 0)
            LIMIT %(bound)s) AS x) AS lines,
       (SELECT count(*) FROM (
            SELECT FROM memories AS m
            WHERE true
              AND m.embedded_hash IS DISTINCT
                FROM hashtextextended(m.key || E'\n' || m.value,
                0) AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL
            LIMIT %(bound)s) AS x) AS memories,
       (SELECT count(*) FROM index_workers AS w
        WHERE w.model = %(model)s
          AND w.seen_at > now() - interval '30 seconds') AS workers,
       (SELECT coalesce(sum(w.per_second), 0) FROM index_workers AS w
        WHERE w.model = %(model)s
          AND w.seen_at > now() - interval '30 seconds') AS per_second

-- indexing.INDEXING_STATUS
SELECT (SELECT count(*) FROM (
            SELECT FROM archival_lines AS l
            WHERE l.tenant_id = %(tenant_id)s
              AND l.embedded_hash IS DISTINCT FROM hashtextextended(l.content, 0)
            LIMIT %(bound)s) AS x) AS lines,
       (SELECT count(*) FROM (
            SELECT FROM memories AS m
            WHERE m.tenant_id = %(tenant_id)s
              AND m.embedded_hash IS DISTINCT
                FROM hashtextextended(m.key || E'\n' || m.value,
                0) AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL
            LIMIT %(bound)s) AS x) AS memories,
       (SELECT count(*) FROM index_workers AS w
        WHERE w.model = %(model)s
          AND w.seen_at > now() - interval '30 seconds') AS workers,
       (SELECT coalesce(sum(w.per_second), 0) FROM index_workers AS w
        WHERE w.model = %(model)s
          AND w.seen_at > now() - interval '30 seconds') AS per_second

-- indexing.LEAVE
DELETE FROM index_workers WHERE worker = %(worker)s

-- indexing.NEXT_UNSCREENED_TENANT
SELECT m.tenant_id FROM memories AS m
WHERE m.superseded_by IS NULL AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value,
  0) AND m.text_by IS NULL AND m.screened_hash IS DISTINCT
  FROM hashtextextended(m.key || E'\n' || m.value,
  0) AND m.embedding_model = %(model)s AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.tenant_id > %(after)s
ORDER BY m.tenant_id
LIMIT 1

-- indexing.PGVECTOR_INSTALLED
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'vector') AS installed

-- jobs.DUE_TENANTS
SELECT tenant_id FROM extraction_jobs
WHERE
    ((status = 'queued' AND run_after <= now())
     OR (status = 'running' AND lease_until < now()))
GROUP BY tenant_id
ORDER BY min(run_after)
LIMIT %(tenants)s

-- jobs._CLAIM
WITH due AS (
    SELECT id FROM extraction_jobs
    WHERE tenant_id = %(tenant_id)s AND
    ((status = 'queued' AND run_after <= now())
     OR (status = 'running' AND lease_until < now()))
    ORDER BY run_after
    LIMIT 1
    FOR UPDATE SKIP LOCKED
)
UPDATE extraction_jobs AS j
SET status = 'running', attempts = j.attempts + 1, lease_until = now() + %(lease)s,
    updated_at = now()
FROM due
WHERE j.tenant_id = %(tenant_id)s AND j.id = due.id
RETURNING j.tenant_id, j.id, j.actor_user_id, j.attempts, j.agent_id, j.workspace_id,
          j.session_id, j.chain_id, j.transcript

-- jobs._ENQUEUE
INSERT INTO extraction_jobs (tenant_id,
  id,
  synthetic_session_id,
  agent_id,
  workspace_id,
  session_id,
  chain_id,
  actor_user_id,
  transcript,
  run_after)
VALUES (%(tenant_id)s::text,
  %(id)s::UUID,
  %(synthetic_session_id)s::text,
  %(agent_id)s::text,
  %(workspace_id)s::text,
  %(session_id)s::text,
  %(chain_id)s::text,
  %(actor)s,
  %(transcript)s::text,
  now() + %(settle)s)
ON CONFLICT (tenant_id, synthetic_session_id) WHERE status = 'queued' DO UPDATE
SET agent_id = excluded.agent_id, workspace_id = excluded.workspace_id,
    transcript = excluded.transcript, actor_user_id = excluded.actor_user_id,
    run_after = excluded.run_after, updated_at = now()
RETURNING id

-- jobs._FINISH
UPDATE extraction_jobs
SET status = 'done', outcome = %(outcome)s, detail = %(detail)s, lease_until = NULL,
    transcript = '', result = %(result)s, updated_at = now()

WHERE tenant_id = %(tenant_id)s AND id = %(id)s AND status = 'running'
  AND attempts = %(attempt)s
RETURNING id

-- jobs._GET
SELECT id,
  synthetic_session_id,
  agent_id,
  workspace_id,
  status,
  attempts,
  run_after,
  outcome,
  detail,
  created_at,
  updated_at,
  result
FROM extraction_jobs
WHERE tenant_id = %(tenant_id)s AND id = %(id)s

-- jobs._RETRY
WITH newer AS (
    SELECT FROM extraction_jobs AS queued
    JOIN extraction_jobs AS this
      ON queued.tenant_id = %(tenant_id)s
     AND queued.synthetic_session_id = this.synthetic_session_id
    WHERE this.tenant_id = %(tenant_id)s AND this.id = %(id)s AND queued.status = 'queued'
)
UPDATE extraction_jobs
SET status = CASE WHEN EXISTS (SELECT FROM newer) THEN 'done' ELSE 'queued' END,
    run_after = CASE WHEN EXISTS (SELECT FROM newer) THEN run_after
                     ELSE now() + %(delay)s END,
    detail = CASE WHEN EXISTS (SELECT FROM newer)
                  THEN %(detail)s || '; superseded by a newer pass of the same run'
                  ELSE %(detail)s END,
    transcript = CASE WHEN EXISTS (SELECT FROM newer) THEN '' ELSE transcript END,
    lease_until = NULL, outcome = %(outcome)s, updated_at = now()

WHERE tenant_id = %(tenant_id)s AND id = %(id)s AND status = 'running'
  AND attempts = %(attempt)s
RETURNING status

-- keys._ADD
INSERT INTO api_keys (tenant_id, id, user_id, secret_hash, name, role)
VALUES (%(tenant_id)s::text,
  %(id)s::text,
  %(user_id)s::text,
  %(secret_hash)s::BYTEA,
  coalesce(%(name)s::text, ''),
  coalesce(%(role)s::text, 'orchestrator'))
RETURNING tenant_id, id, user_id, secret_hash, name, created_at, revoked_at, role

-- keys._ALL
SELECT tenant_id, id, user_id, secret_hash, name, created_at, revoked_at, role FROM api_keys
WHERE %(tenant_id)s::text IS NULL OR tenant_id = %(tenant_id)s
ORDER BY tenant_id, created_at, id

-- keys._FIND
SELECT tenant_id, id, user_id, secret_hash, name, created_at, revoked_at, role
  FROM api_keys
  WHERE id = %(id)s

-- keys._REVOKE
UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = %(id)s
RETURNING tenant_id, id, user_id, secret_hash, name, created_at, revoked_at, role

-- memories.EXPIRED_TENANTS
SELECT DISTINCT m.tenant_id FROM memories AS m WHERE m.expire_time <= now() LIMIT %(limit)s

-- memories.HISTORY_CROSSED
SELECT e.tenant_id, e.memory_id, e.occurred_at, e.id, e.new_memory IS NULL AS gone
FROM memory_events AS e
WHERE (e.occurred_at, e.id) > (%(after_at)s, %(after_id)s)
  AND e.occurred_at < statement_timestamp() - %(kept)s::interval
ORDER BY e.occurred_at, e.id
LIMIT %(limit)s

-- memories.HISTORY_SWEEP_REACHED
INSERT INTO history_sweep AS h (swept_at, swept_id) VALUES (%(at)s, %(id)s)
ON CONFLICT (one) DO UPDATE SET swept_at = excluded.swept_at, swept_id = excluded.swept_id
WHERE (h.swept_at, h.swept_id) < (excluded.swept_at, excluded.swept_id)

-- memories.HISTORY_SWEPT
SELECT swept_at, swept_id FROM history_sweep

-- memories.PRUNE_EVENTS
DELETE FROM memory_events AS e
USING unnest(%(memory_ids)s::uuid[], %(ats)s::timestamptz[], %(ids)s::uuid[],
             %(gone)s::boolean[]) AS c(memory_id, occurred_at, id, gone)
WHERE e.tenant_id = %(tenant_id)s AND e.memory_id = c.memory_id
  AND ((e.occurred_at, e.id) < (c.occurred_at, c.id) OR (c.gone AND e.id = c.id))

-- memories.SWEEP_EXPIRED
WITH old AS (
  SELECT *
  FROM memories AS m
  WHERE m.tenant_id = %(tenant_id)s AND m.expire_time <= now()
    ORDER BY m.expire_time LIMIT %(limit)s FOR UPDATE SKIP LOCKED),
gone AS (
    DELETE FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = ANY (ARRAY(SELECT id FROM old))
    RETURNING m.tenant_id, m.id
),
emptied AS (
    UPDATE memory_events AS e SET old_memory = NULL, new_memory = NULL
    WHERE e.tenant_id = %(tenant_id)s AND e.memory_id = ANY (ARRAY(SELECT id FROM gone))
      AND (e.old_memory IS NOT NULL OR e.new_memory IS NOT NULL)
),
event AS (
    INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id,
                               occurred_at, old_memory, new_memory)
    SELECT gone.tenant_id, gen_random_uuid(), gone.id, 'deleted', %(actor)s,
           clock_timestamp(), NULL, NULL
    FROM gone
)
SELECT count(*) AS n FROM gone

-- memories._CHANGED_OR_OLD
SELECT m.id,
  m.scope,
  m.owner_id,
  m.key,
  m.value,
  m.pinned,
  m.importance,
  m.source,
  m.tags,
  m.confidence,
  m.metadata,
  m.version,
  m.created_at,
  m.updated_at,
  m.conversation_provider,
  m.conversation_id,
  m.expire_time,
  m.superseded_by,
  m.last_used_time,
  m.valid_start_time,
  m.valid_end_time,
  m.note,
  m.held_for_review,
  m.hold_reason,
  CASE WHEN %(index_model)s::text IS NULL THEN NULL ELSE coalesce(m.embedding_model = %(index_model)s::text AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value, 0) AND m.embedding IS NOT NULL, false) END AS embedded,
  (
    SELECT coalesce(json_agg(g ORDER BY g.ordinal), '[]')
    FROM memory_groundings AS g
    WHERE g.tenant_id = %(tenant_id)s AND g.memory_id = m.id
) AS groundings
FROM (SELECT * FROM changed UNION ALL SELECT * FROM old WHERE NOT EXISTS (SELECT FROM changed))
     AS m

-- memories._CHANGE_OLD
WITH old AS (
    SELECT * FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s AND (m.expire_time IS NULL OR m.expire_time > now())
    FOR UPDATE
),

-- memories._COUNT
SELECT count(*) AS n FROM memories AS m
WHERE m.tenant_id = %(tenant_id)s AND m.scope = %(scope)s AND m.owner_id = %(owner_id)s AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL

-- memories._CREATE
WITH inserted AS (
    INSERT INTO memories (tenant_id,
      id,
      scope,
      owner_id,
      key,
      value,
      pinned,
      importance,
      source,
      tags,
      confidence,
      metadata,
      created_by,
      updated_by,
      conversation_provider,
      conversation_id,
      expire_time,
      valid_start_time,
      valid_end_time,
      note,
      text_by)
    SELECT %(tenant_id)s::text,
      %(id)s::UUID,
      %(scope)s::text,
      %(owner_id)s::text,
      %(key)s::text,
      %(value)s::text,
      coalesce(%(pinned)s::bool, false),
      coalesce(%(importance)s::int2, 0),
      %(source)s::text,
      coalesce(%(tags)s::TEXT[], '{}'),
      %(confidence)s::float8,
      coalesce(%(metadata)s::JSONB, '{}'::jsonb),
      %(actor)s,
      %(actor)s,
      %(conversation_provider)s::text,
      %(conversation_id)s::text,
      coalesce(%(expire_time)s::timestamptz, clock_timestamp() + %(ttl)s::interval),
      %(valid_start_time)s::timestamptz,
      %(valid_end_time)s::timestamptz,
      coalesce(%(note)s::text, ''),
      %(person)s
    ON CONFLICT (tenant_id, scope, owner_id, key) DO NOTHING
    RETURNING *
),
created_event AS (
    INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id,
                               occurred_at, old_memory, new_memory)
    SELECT inserted.tenant_id, gen_random_uuid(), inserted.id, 'created', %(actor)s,
           inserted.updated_at,
             NULL::jsonb,
             to_jsonb(inserted) - '{tenant_id,embedding,embedding_model,embedded_hash,index_lease_until,screened_hash}'::text[]
    FROM inserted)
SELECT n.id,
  n.scope,
  n.owner_id,
  n.key,
  n.value,
  n.pinned,
  n.importance,
  n.source,
  n.tags,
  n.confidence,
  n.metadata,
  n.version,
  n.created_at,
  n.updated_at,
  n.conversation_provider,
  n.conversation_id,
  n.expire_time,
  n.superseded_by,
  n.last_used_time,
  n.valid_start_time,
  n.valid_end_time,
  n.note,
  n.held_for_review,
  n.hold_reason,
  CASE WHEN %(index_model)s::text IS NULL THEN NULL ELSE coalesce(n.embedding_model = %(index_model)s::text AND n.embedded_hash = hashtextextended(n.key || E'\n' || n.value, 0) AND n.embedding IS NOT NULL, false) END AS embedded
  FROM inserted AS n

-- memories._DELETE
WITH old AS (
    SELECT * FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s AND (m.expire_time IS NULL OR m.expire_time > now())
    FOR UPDATE
),
gone AS (
    DELETE FROM memories AS m
    USING old
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s
      AND (%(version)s::bigint IS NULL OR old.version = %(version)s::bigint)
    RETURNING m.id
),
event AS (
    INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id,
                               occurred_at, old_memory, new_memory)
    SELECT old.tenant_id, gen_random_uuid(), old.id, 'deleted', %(actor)s,
           clock_timestamp(),
             to_jsonb(old) - '{tenant_id,embedding,embedding_model,embedded_hash,index_lease_until,screened_hash}'::text[],
             NULL::jsonb
    FROM old WHERE EXISTS (SELECT FROM gone))
SELECT old.id,
  old.scope,
  old.owner_id,
  old.key,
  old.value,
  old.pinned,
  old.importance,
  old.source,
  old.tags,
  old.confidence,
  old.metadata,
  old.version,
  old.created_at,
  old.updated_at,
  old.conversation_provider,
  old.conversation_id,
  old.expire_time,
  old.superseded_by,
  old.last_used_time,
  old.valid_start_time,
  old.valid_end_time,
  old.note,
  old.held_for_review,
  old.hold_reason,
  CASE WHEN %(index_model)s::text IS NULL THEN NULL ELSE coalesce(old.embedding_model = %(index_model)s::text AND old.embedded_hash = hashtextextended(old.key || E'\n' || old.value, 0) AND old.embedding IS NOT NULL, false) END AS embedded,
  EXISTS (
  SELECT
  FROM gone) AS deleted
  FROM old

-- memories._DELETE_EXPIRED_AT_KEY
WITH old AS (SELECT * FROM memories AS m WHERE
    tenant_id = %(tenant_id)s AND scope = %(scope)s AND owner_id = %(owner_id)s
    AND key = %(key)s AND m.expire_time <= now() FOR UPDATE),
gone AS (
    DELETE FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = ANY (ARRAY(SELECT id FROM old))
    RETURNING m.tenant_id, m.id
),
emptied AS (
    UPDATE memory_events AS e SET old_memory = NULL, new_memory = NULL
    WHERE e.tenant_id = %(tenant_id)s AND e.memory_id = ANY (ARRAY(SELECT id FROM gone))
      AND (e.old_memory IS NOT NULL OR e.new_memory IS NOT NULL)
),
event AS (
    INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id,
                               occurred_at, old_memory, new_memory)
    SELECT gone.tenant_id, gen_random_uuid(), gone.id, 'deleted', %(actor)s,
           clock_timestamp(), NULL, NULL
    FROM gone
)
SELECT count(*) AS n FROM gone

-- memories._DELETE_GROUNDINGS
DELETE FROM memory_groundings WHERE tenant_id = %(tenant_id)s AND memory_id = %(id)s

-- memories._FIND_BY_KEY
SELECT m.id,
  m.scope,
  m.owner_id,
  m.key,
  m.value,
  m.pinned,
  m.importance,
  m.source,
  m.tags,
  m.confidence,
  m.metadata,
  m.version,
  m.created_at,
  m.updated_at,
  m.conversation_provider,
  m.conversation_id,
  m.expire_time,
  m.superseded_by,
  m.last_used_time,
  m.valid_start_time,
  m.valid_end_time,
  m.note,
  m.held_for_review,
  m.hold_reason,
  CASE WHEN %(index_model)s::text IS NULL THEN NULL ELSE coalesce(m.embedding_model = %(index_model)s::text AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value, 0) AND m.embedding IS NOT NULL, false) END AS embedded
  FROM memories AS m
  WHERE
    tenant_id = %(tenant_id)s AND scope = %(scope)s AND owner_id = %(owner_id)s
    AND key = %(key)s AND (m.expire_time IS NULL OR m.expire_time > now())

-- memories._GET
SELECT m.id,
  m.scope,
  m.owner_id,
  m.key,
  m.value,
  m.pinned,
  m.importance,
  m.source,
  m.tags,
  m.confidence,
  m.metadata,
  m.version,
  m.created_at,
  m.updated_at,
  m.conversation_provider,
  m.conversation_id,
  m.expire_time,
  m.superseded_by,
  m.last_used_time,
  m.valid_start_time,
  m.valid_end_time,
  m.note,
  m.held_for_review,
  m.hold_reason,
  CASE WHEN %(index_model)s::text IS NULL THEN NULL ELSE coalesce(m.embedding_model = %(index_model)s::text AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value, 0) AND m.embedding IS NOT NULL, false) END AS embedded,
  (
    SELECT coalesce(json_agg(g ORDER BY g.ordinal), '[]')
    FROM memory_groundings AS g
    WHERE g.tenant_id = %(tenant_id)s AND g.memory_id = m.id
) AS groundings
FROM memories AS m
WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s AND (m.expire_time IS NULL OR m.expire_time > now())

-- memories._GET_BY_KEY
SELECT m.id,
  m.scope,
  m.owner_id,
  m.key,
  m.value,
  m.pinned,
  m.importance,
  m.source,
  m.tags,
  m.confidence,
  m.metadata,
  m.version,
  m.created_at,
  m.updated_at,
  m.conversation_provider,
  m.conversation_id,
  m.expire_time,
  m.superseded_by,
  m.last_used_time,
  m.valid_start_time,
  m.valid_end_time,
  m.note,
  m.held_for_review,
  m.hold_reason,
  CASE WHEN %(index_model)s::text IS NULL THEN NULL ELSE coalesce(m.embedding_model = %(index_model)s::text AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value, 0) AND m.embedding IS NOT NULL, false) END AS embedded,
  (
    SELECT coalesce(json_agg(g ORDER BY g.ordinal), '[]')
    FROM memory_groundings AS g
    WHERE g.tenant_id = %(tenant_id)s AND g.memory_id = m.id
) AS groundings FROM memories AS m WHERE
    tenant_id = %(tenant_id)s AND scope = %(scope)s AND owner_id = %(owner_id)s
    AND key = %(key)s AND (m.expire_time IS NULL OR m.expire_time > now())

-- memories._GET_LOCKED
SELECT m.id,
  m.scope,
  m.owner_id,
  m.key,
  m.value,
  m.pinned,
  m.importance,
  m.source,
  m.tags,
  m.confidence,
  m.metadata,
  m.version,
  m.created_at,
  m.updated_at,
  m.conversation_provider,
  m.conversation_id,
  m.expire_time,
  m.superseded_by,
  m.last_used_time,
  m.valid_start_time,
  m.valid_end_time,
  m.note,
  m.held_for_review,
  m.hold_reason,
  CASE WHEN %(index_model)s::text IS NULL THEN NULL ELSE coalesce(m.embedding_model = %(index_model)s::text AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value, 0) AND m.embedding IS NOT NULL, false) END AS embedded,
  (
    SELECT coalesce(json_agg(g ORDER BY g.ordinal), '[]')
    FROM memory_groundings AS g
    WHERE g.tenant_id = %(tenant_id)s AND g.memory_id = m.id
) AS groundings
FROM memories AS m
WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s AND (m.expire_time IS NULL OR m.expire_time > now())
FOR UPDATE OF m

-- memories._INSERT_GROUNDINGS
INSERT INTO memory_groundings (tenant_id, memory_id, ordinal, message_position,
                               provider_message_id, start_character, end_character, quote,
                               raw_event_index, raw_start_character, raw_end_character,
                               metadata)
SELECT %(tenant_id)s, %(id)s, g.ordinal, g.message_position, g.provider_message_id,
       g.start_character, g.end_character, g.quote, g.raw_event_index,
       g.raw_start_character, g.raw_end_character, coalesce(g.metadata, '{}')
FROM jsonb_to_recordset(%(groundings)s::jsonb) AS g(
    ordinal smallint, message_position integer, provider_message_id text,
    start_character integer, end_character integer, quote text, raw_event_index integer,
    raw_start_character integer, raw_end_character integer, metadata jsonb)

-- memories._LEARNINGS
SELECT m.id,
  m.scope,
  m.owner_id,
  m.key,
  m.value,
  m.pinned,
  m.importance,
  m.source,
  m.tags,
  m.confidence,
  m.metadata,
  m.version,
  m.created_at,
  m.updated_at,
  m.conversation_provider,
  m.conversation_id,
  m.expire_time,
  m.superseded_by,
  m.last_used_time,
  m.valid_start_time,
  m.valid_end_time,
  m.note,
  m.held_for_review,
  m.hold_reason,
  CASE WHEN %(index_model)s::text IS NULL THEN NULL ELSE coalesce(m.embedding_model = %(index_model)s::text AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value, 0) AND m.embedding IS NOT NULL, false) END AS embedded
  FROM memories AS m
WHERE tenant_id = %(tenant_id)s AND source = 'director' AND scope = 'agent'
  AND owner_id = ANY (%(agent_ids)s::text[]) AND starts_with(key, %(prefix)s)
  AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review
ORDER BY created_at DESC, key DESC
LIMIT %(limit)s

-- memories._MARK_USED
    UPDATE memories AS used
    SET last_used_time = clock_timestamp(), expire_time = expiry_after_use(used)
    WHERE used.tenant_id = %(tenant_id)s AND used.id = ANY(ARRAY(
        SELECT x.id FROM memories AS x
        WHERE x.tenant_id = %(tenant_id)s AND x.id = ANY(ARRAY(SELECT unnest(%(ids)s::uuid[])))
          AND coalesce(last_used_time, '-infinity') < clock_timestamp() - interval '60s'
        FOR UPDATE SKIP LOCKED))

-- memories._MATCHING
SELECT count(*) AS n FROM memories AS m
WHERE m.tenant_id = %(tenant_id)s AND m.scope = %(scope)s AND m.owner_id = %(owner_id)s

-- memories._NEW_ROW
    INSERT INTO memories (tenant_id,
      id,
      scope,
      owner_id,
      key,
      value,
      pinned,
      importance,
      source,
      tags,
      confidence,
      metadata,
      created_by,
      updated_by,
      conversation_provider,
      conversation_id,
      expire_time,
      valid_start_time,
      valid_end_time,
      note,
      text_by)
    SELECT %(tenant_id)s::text,
      %(id)s::UUID,
      %(scope)s::text,
      %(owner_id)s::text,
      %(key)s::text,
      %(value)s::text,
      coalesce(%(pinned)s::bool, false),
      coalesce(%(importance)s::int2, 0),
      %(source)s::text,
      coalesce(%(tags)s::TEXT[], '{}'),
      %(confidence)s::float8,
      coalesce(%(metadata)s::JSONB, '{}'::jsonb),
      %(actor)s,
      %(actor)s,
      %(conversation_provider)s::text,
      %(conversation_id)s::text,
      coalesce(%(expire_time)s::timestamptz, clock_timestamp() + %(ttl)s::interval),
      %(valid_start_time)s::timestamptz,
      %(valid_end_time)s::timestamptz,
      coalesce(%(note)s::text, ''),
      %(person)s

-- memories._OWNED
SELECT m.id,
  m.scope,
  m.owner_id,
  m.key,
  m.value,
  m.pinned,
  m.importance,
  m.source,
  m.tags,
  m.confidence,
  m.metadata,
  m.version,
  m.created_at,
  m.updated_at,
  m.conversation_provider,
  m.conversation_id,
  m.expire_time,
  m.superseded_by,
  m.last_used_time,
  m.valid_start_time,
  m.valid_end_time,
  m.note,
  m.held_for_review,
  m.hold_reason,
  CASE WHEN %(index_model)s::text IS NULL THEN NULL ELSE coalesce(m.embedding_model = %(index_model)s::text AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value, 0) AND m.embedding IS NOT NULL, false) END AS embedded,
  (
    SELECT coalesce(json_agg(g ORDER BY g.ordinal), '[]')
    FROM memory_groundings AS g
    WHERE g.tenant_id = %(tenant_id)s AND g.memory_id = m.id
) AS groundings
FROM memories AS m
WHERE m.tenant_id = %(tenant_id)s AND m.scope = %(scope)s AND m.owner_id = %(owner_id)s

-- memories._OWNERS
WITH held AS (
    SELECT m.owner_id AS id, count(*) FILTER (
      WHERE (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL) AS n,
           max(m.updated_at) AS at, false AS enabled
    FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.scope = %(scope)s AND m.owner_id > %(after)s
    GROUP BY m.owner_id
),
configured AS (
    SELECT s.agent_id AS id, 0::bigint AS n, s.updated_at AS at, s.memory_enabled AS enabled
    FROM agent_settings AS s
    WHERE s.tenant_id = %(tenant_id)s AND %(scope)s = 'agent' AND s.agent_id > %(after)s
)
SELECT o.id, sum(o.n)::int AS memory_count, max(o.at) AS last_activity,
       bool_or(o.enabled) AS memory_enabled
FROM (SELECT * FROM held UNION ALL SELECT * FROM configured) AS o
GROUP BY o.id
ORDER BY o.id
LIMIT %(limit)s

-- memories._PIN
WITH old AS (
    SELECT * FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s AND (m.expire_time IS NULL OR m.expire_time > now())
    FOR UPDATE
),
changed AS (
    UPDATE memories AS m
    SET pinned = %(pinned)s,
      version = m.version + 1,
      updated_at = clock_timestamp(),
      updated_by = %(actor)s
    FROM old
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s AND old.pinned <> %(pinned)s
    RETURNING m.*
),
event AS (
    INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id,
                               occurred_at, old_memory, new_memory)
    SELECT changed.tenant_id,
      gen_random_uuid(),
      changed.id,
      CASE WHEN %(pinned)s THEN 'pinned' ELSE 'unpinned' END,
      %(actor)s,
           changed.updated_at,
             to_jsonb(old) - '{tenant_id,embedding,embedding_model,embedded_hash,index_lease_until,screened_hash}'::text[],
             to_jsonb(changed) - '{tenant_id,embedding,embedding_model,embedded_hash,index_lease_until,screened_hash}'::text[]
    FROM changed JOIN old ON old.id = changed.id)

SELECT m.id,
  m.scope,
  m.owner_id,
  m.key,
  m.value,
  m.pinned,
  m.importance,
  m.source,
  m.tags,
  m.confidence,
  m.metadata,
  m.version,
  m.created_at,
  m.updated_at,
  m.conversation_provider,
  m.conversation_id,
  m.expire_time,
  m.superseded_by,
  m.last_used_time,
  m.valid_start_time,
  m.valid_end_time,
  m.note,
  m.held_for_review,
  m.hold_reason,
  CASE WHEN %(index_model)s::text IS NULL THEN NULL ELSE coalesce(m.embedding_model = %(index_model)s::text AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value, 0) AND m.embedding IS NOT NULL, false) END AS embedded,
  (
    SELECT coalesce(json_agg(g ORDER BY g.ordinal), '[]')
    FROM memory_groundings AS g
    WHERE g.tenant_id = %(tenant_id)s AND g.memory_id = m.id
) AS groundings
FROM (SELECT * FROM changed UNION ALL SELECT * FROM old WHERE NOT EXISTS (SELECT FROM changed))
     AS m

-- memories._RECENT
SELECT m.id,
  m.scope,
  m.owner_id,
  m.key,
  m.value,
  m.pinned,
  m.importance,
  m.source,
  m.tags,
  m.confidence,
  m.metadata,
  m.version,
  m.created_at,
  m.updated_at,
  m.conversation_provider,
  m.conversation_id,
  m.expire_time,
  m.superseded_by,
  m.last_used_time,
  m.valid_start_time,
  m.valid_end_time,
  m.note,
  m.held_for_review,
  m.hold_reason,
  CASE WHEN %(index_model)s::text IS NULL THEN NULL ELSE coalesce(m.embedding_model = %(index_model)s::text AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value, 0) AND m.embedding IS NOT NULL, false) END AS embedded
  FROM memories AS m
JOIN unnest(%(scopes)s::text[], %(owner_ids)s::text[]) AS o(scope, owner_id)
  ON m.scope = o.scope AND m.owner_id = o.owner_id
WHERE m.tenant_id = %(tenant_id)s AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL
ORDER BY m.updated_at DESC, m.id
LIMIT %(limit)s

-- memories._SUPERSEDE
WITH old AS (
    SELECT * FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s AND (m.expire_time IS NULL OR m.expire_time > now())
    FOR UPDATE
),
changed AS (
    UPDATE memories AS m
    SET superseded_by = %(by)s,
        valid_end_time = CASE
            WHEN old.valid_start_time IS NULL OR old.valid_start_time < %(at)s::timestamptz
            THEN least(coalesce(old.valid_end_time, %(at)s::timestamptz), %(at)s::timestamptz)
            ELSE old.valid_end_time END,
        version = m.version + 1, updated_at = clock_timestamp(), updated_by = %(actor)s
    FROM old
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s
      AND old.scope = %(scope)s AND old.owner_id = %(owner_id)s AND old.id <> %(by)s
      AND old.superseded_by IS DISTINCT FROM %(by)s
    RETURNING m.*
),
event AS (
    INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id,
                               occurred_at, old_memory, new_memory)
    SELECT changed.tenant_id, gen_random_uuid(), changed.id, 'superseded', %(actor)s,
           changed.updated_at,
             to_jsonb(old) - '{tenant_id,embedding,embedding_model,embedded_hash,index_lease_until,screened_hash}'::text[],
             to_jsonb(changed) - '{tenant_id,embedding,embedding_model,embedded_hash,index_lease_until,screened_hash}'::text[]
    FROM changed JOIN old ON old.id = changed.id)

SELECT m.id,
  m.scope,
  m.owner_id,
  m.key,
  m.value,
  m.pinned,
  m.importance,
  m.source,
  m.tags,
  m.confidence,
  m.metadata,
  m.version,
  m.created_at,
  m.updated_at,
  m.conversation_provider,
  m.conversation_id,
  m.expire_time,
  m.superseded_by,
  m.last_used_time,
  m.valid_start_time,
  m.valid_end_time,
  m.note,
  m.held_for_review,
  m.hold_reason,
  CASE WHEN %(index_model)s::text IS NULL THEN NULL ELSE coalesce(m.embedding_model = %(index_model)s::text AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value, 0) AND m.embedding IS NOT NULL, false) END AS embedded,
  (
    SELECT coalesce(json_agg(g ORDER BY g.ordinal), '[]')
    FROM memory_groundings AS g
    WHERE g.tenant_id = %(tenant_id)s AND g.memory_id = m.id
) AS groundings
FROM (SELECT * FROM changed UNION ALL SELECT * FROM old WHERE NOT EXISTS (SELECT FROM changed))
     AS m

-- memories._UPDATE
WITH old AS (
    SELECT * FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s AND (m.expire_time IS NULL OR m.expire_time > now())
    FOR UPDATE
),
changed AS (
    UPDATE memories AS m
    SET key = coalesce(%(key)s::text, m.key),
      value = coalesce(%(value)s::text, m.value),
      pinned = coalesce(%(pinned)s::bool, m.pinned),
      importance = coalesce(%(importance)s::int2, m.importance),
      tags = coalesce(%(tags)s::TEXT[], m.tags),
      expire_time = CASE WHEN %(clear_expire_time)s THEN NULL ELSE coalesce(coalesce(%(expire_time)s::timestamptz, clock_timestamp() + %(ttl)s::interval), m.expire_time) END,
      valid_start_time = CASE WHEN %(clear_valid_start_time)s THEN NULL ELSE coalesce(%(valid_start_time)s::timestamptz, m.valid_start_time) END,
      valid_end_time = CASE WHEN %(clear_valid_end_time)s THEN NULL ELSE coalesce(%(valid_end_time)s::timestamptz, m.valid_end_time) END,
      note = coalesce(%(note)s::text, m.note),
      held_for_review = coalesce(%(held_for_review)s::bool, m.held_for_review),
      version = m.version + 1,
      updated_at = clock_timestamp(),
      updated_by = %(actor)s,
      hold_reason = CASE
    WHEN NOT coalesce(%(held_for_review)s::boolean, old.held_for_review) THEN NULL
    WHEN old.held_for_review THEN old.hold_reason
    ELSE 'requested' END, screened_hash = CASE
    WHEN old.held_for_review AND NOT coalesce(%(held_for_review)s::boolean, true)
    THEN hashtextextended(old.key || E'\n' || old.value, 0) ELSE old.screened_hash END,
        text_by = CASE
    WHEN %(key)s::text IS NOT NULL OR %(value)s::text IS NOT NULL
    THEN CASE WHEN old.text_by IS NOT NULL
                   OR (%(key)s::text IS NOT NULL AND %(value)s::text IS NOT NULL)
              THEN %(person)s::text END
    ELSE old.text_by END
    FROM old
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s
    RETURNING m.*
),
event AS (
    INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id,
                               occurred_at, old_memory, new_memory)
    SELECT changed.tenant_id, gen_random_uuid(), changed.id, %(event)s, %(actor)s,
           changed.updated_at,
             to_jsonb(old) - '{tenant_id,embedding,embedding_model,embedded_hash,index_lease_until,screened_hash}'::text[],
             to_jsonb(changed) - '{tenant_id,embedding,embedding_model,embedded_hash,index_lease_until,screened_hash}'::text[]
    FROM changed JOIN old ON old.id = changed.id)

SELECT m.id,
  m.scope,
  m.owner_id,
  m.key,
  m.value,
  m.pinned,
  m.importance,
  m.source,
  m.tags,
  m.confidence,
  m.metadata,
  m.version,
  m.created_at,
  m.updated_at,
  m.conversation_provider,
  m.conversation_id,
  m.expire_time,
  m.superseded_by,
  m.last_used_time,
  m.valid_start_time,
  m.valid_end_time,
  m.note,
  m.held_for_review,
  m.hold_reason,
  CASE WHEN %(index_model)s::text IS NULL THEN NULL ELSE coalesce(m.embedding_model = %(index_model)s::text AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value, 0) AND m.embedding IS NOT NULL, false) END AS embedded,
  (
    SELECT coalesce(json_agg(g ORDER BY g.ordinal), '[]')
    FROM memory_groundings AS g
    WHERE g.tenant_id = %(tenant_id)s AND g.memory_id = m.id
) AS groundings
FROM (SELECT * FROM changed UNION ALL SELECT * FROM old WHERE NOT EXISTS (SELECT FROM changed))
     AS m

-- memories._WRITE
WITH current AS(
  SELECT*FROM memories AS m
  WHERE tenant_id=%(tenant_id)s AND scope=%(scope)s AND owner_id=%(owner_id)s AND key=%(key)s AND(m.expire_time IS NULL OR m.expire_time>now())),
  updated AS(UPDATE memories AS m
  SET value=coalesce(%(value)s::text,m.value),
  pinned=coalesce(%(pinned)s::bool,m.pinned),
  importance=coalesce(%(importance)s::int2,m.importance),
  tags=CASE WHEN %(evidence)s THEN %(tags)s::TEXT[] ELSE m.tags END,
  confidence=CASE WHEN %(evidence)s THEN %(confidence)s::float8 ELSE m.confidence END,
  metadata=CASE WHEN %(evidence)s THEN %(metadata)s::JSONB ELSE m.metadata END,
  conversation_provider=CASE WHEN %(evidence)s THEN %(conversation_provider)s::text ELSE m.conversation_provider END,
  conversation_id=CASE WHEN %(evidence)s THEN %(conversation_id)s::text ELSE m.conversation_id END,
  expire_time=coalesce(coalesce(%(expire_time)s::timestamptz,clock_timestamp()+ %(ttl)s::interval),m.expire_time),
  superseded_by=NULL,
  valid_start_time=coalesce(%(valid_start_time)s::timestamptz,m.valid_start_time),
  valid_end_time=coalesce(%(valid_end_time)s::timestamptz,m.valid_end_time),
  note=coalesce(%(note)s::text,m.note),
  version=m.version + 1,
  updated_at=clock_timestamp(),
  updated_by=%(actor)s,
  text_by=%(person)s
  WHERE tenant_id=%(tenant_id)s AND scope=%(scope)s AND owner_id=%(owner_id)s AND key=%(key)s AND m.id=(
  SELECT id
  FROM current)AND m.version=(
  SELECT version
  FROM current)AND(
  SELECT source
  FROM current)=%(source)s
  RETURNING m.*),inserted AS(
  INSERT INTO memories(tenant_id,
  id,
  scope,
  owner_id,
  key,
  value,
  pinned,
  importance,
  source,
  tags,
  confidence,
  metadata,
  created_by,
  updated_by,
  conversation_provider,
  conversation_id,
  expire_time,
  valid_start_time,
  valid_end_time,
  note,
  text_by)
  SELECT %(tenant_id)s::text,
  %(id)s::UUID,
  %(scope)s::text,
  %(owner_id)s::text,
  %(key)s::text,
  %(value)s::text,
  coalesce(%(pinned)s::bool,false),
  coalesce(%(importance)s::int2,0),
  %(source)s::text,
  coalesce(%(tags)s::TEXT[],'{}'),
  %(confidence)s::float8,
  coalesce(%(metadata)s::JSONB,'{}'::jsonb),
  %(actor)s,
  %(actor)s,
  %(conversation_provider)s::text,
  %(conversation_id)s::text,
  coalesce(%(expire_time)s::timestamptz,clock_timestamp()+ %(ttl)s::interval),
  %(valid_start_time)s::timestamptz,
  %(valid_end_time)s::timestamptz,
  coalesce(%(note)s::text,''),
  %(person)s
  WHERE NOT EXISTS(
  SELECT
  FROM current)
  ON CONFLICT(tenant_id,scope,owner_id,key)DO NOTHING
  RETURNING *),created_event AS(
  INSERT INTO memory_events(tenant_id,
  id,
  memory_id,
  event_type,
  actor_user_id,
  occurred_at,
  old_memory,
  new_memory)
  SELECT inserted.tenant_id,
  gen_random_uuid(),
  inserted.id,
  'created',
  %(actor)s,
  inserted.updated_at,
  NULL::jsonb,
  to_jsonb(inserted)- '{tenant_id,embedding,embedding_model,embedded_hash,index_lease_until,screened_hash}'::text[]
  FROM inserted),updated_event AS(
  INSERT INTO memory_events(tenant_id,
  id,
  memory_id,
  event_type,
  actor_user_id,
  occurred_at,
  old_memory,
  new_memory)
  SELECT updated.tenant_id,
  gen_random_uuid(),
  updated.id,
  'updated',
  %(actor)s,
  updated.updated_at,
  to_jsonb(current)- '{tenant_id,embedding,embedding_model,embedded_hash,index_lease_until,screened_hash}'::text[],
  to_jsonb(updated)- '{tenant_id,embedding,embedding_model,embedded_hash,index_lease_until,screened_hash}'::text[]
  FROM updated
  JOIN current ON current.id=updated.id),outcomes AS(
  SELECT 'created' AS outcome,n.*
  FROM inserted AS n
  UNION ALL
  SELECT 'updated',n.*
  FROM updated AS n
  UNION ALL
  SELECT 'held',c.*
  FROM current AS c
  WHERE c.source <> %(source)s
  UNION ALL
  SELECT 'moved',c.*
  FROM current AS c
  WHERE c.source=%(source)s AND NOT EXISTS(
  SELECT
  FROM updated))
  SELECT n.outcome,
  n.id,
  n.scope,
  n.owner_id,
  n.key,
  n.value,
  n.pinned,
  n.importance,
  n.source,
  n.tags,
  n.confidence,
  n.metadata,
  n.version,
  n.created_at,
  n.updated_at,
  n.conversation_provider,
  n.conversation_id,
  n.expire_time,
  n.superseded_by,
  n.last_used_time,
  n.valid_start_time,
  n.valid_end_time,
  n.note,
  n.held_for_review,
  n.hold_reason,
  CASE WHEN %(index_model)s::text IS NULL THEN NULL ELSE coalesce(n.embedding_model=%(index_model)s::text AND n.embedded_hash=hashtextextended(n.key || E'\n' || n.value,0)AND n.embedding IS NOT NULL,false)END AS embedded
  FROM outcomes AS n

-- memories._WRITE_LOCKED
WITH current AS(
  SELECT*FROM memories AS m
  WHERE tenant_id=%(tenant_id)s AND scope=%(scope)s AND owner_id=%(owner_id)s AND key=%(key)s AND(m.expire_time IS NULL OR m.expire_time>now())FOR UPDATE),
  updated AS(UPDATE memories AS m
  SET value=coalesce(%(value)s::text,m.value),
  pinned=coalesce(%(pinned)s::bool,m.pinned),
  importance=coalesce(%(importance)s::int2,m.importance),
  tags=CASE WHEN %(evidence)s THEN %(tags)s::TEXT[] ELSE m.tags END,
  confidence=CASE WHEN %(evidence)s THEN %(confidence)s::float8 ELSE m.confidence END,
  metadata=CASE WHEN %(evidence)s THEN %(metadata)s::JSONB ELSE m.metadata END,
  conversation_provider=CASE WHEN %(evidence)s THEN %(conversation_provider)s::text ELSE m.conversation_provider END,
  conversation_id=CASE WHEN %(evidence)s THEN %(conversation_id)s::text ELSE m.conversation_id END,
  expire_time=coalesce(coalesce(%(expire_time)s::timestamptz,clock_timestamp()+ %(ttl)s::interval),m.expire_time),
  superseded_by=NULL,
  valid_start_time=coalesce(%(valid_start_time)s::timestamptz,m.valid_start_time),
  valid_end_time=coalesce(%(valid_end_time)s::timestamptz,m.valid_end_time),
  note=coalesce(%(note)s::text,m.note),
  version=m.version + 1,
  updated_at=clock_timestamp(),
  updated_by=%(actor)s,
  text_by=%(person)s
  WHERE tenant_id=%(tenant_id)s AND scope=%(scope)s AND owner_id=%(owner_id)s AND key=%(key)s AND m.id=(
  SELECT id
  FROM current)AND m.version=(
  SELECT version
  FROM current)AND(
  SELECT source
  FROM current)=%(source)s
  RETURNING m.*),inserted AS(
  INSERT INTO memories(tenant_id,
  id,
  scope,
  owner_id,
  key,
  value,
  pinned,
  importance,
  source,
  tags,
  confidence,
  metadata,
  created_by,
  updated_by,
  conversation_provider,
  conversation_id,
  expire_time,
  valid_start_time,
  valid_end_time,
  note,
  text_by)
  SELECT %(tenant_id)s::text,
  %(id)s::UUID,
  %(scope)s::text,
  %(owner_id)s::text,
  %(key)s::text,
  %(value)s::text,
  coalesce(%(pinned)s::bool,false),
  coalesce(%(importance)s::int2,0),
  %(source)s::text,
  coalesce(%(tags)s::TEXT[],'{}'),
  %(confidence)s::float8,
  coalesce(%(metadata)s::JSONB,'{}'::jsonb),
  %(actor)s,
  %(actor)s,
  %(conversation_provider)s::text,
  %(conversation_id)s::text,
  coalesce(%(expire_time)s::timestamptz,clock_timestamp()+ %(ttl)s::interval),
  %(valid_start_time)s::timestamptz,
  %(valid_end_time)s::timestamptz,
  coalesce(%(note)s::text,''),
  %(person)s
  WHERE NOT EXISTS(
  SELECT
  FROM current)
  ON CONFLICT(tenant_id,scope,owner_id,key)DO NOTHING
  RETURNING *),created_event AS(
  INSERT INTO memory_events(tenant_id,
  id,
  memory_id,
  event_type,
  actor_user_id,
  occurred_at,
  old_memory,
  new_memory)
  SELECT inserted.tenant_id,
  gen_random_uuid(),
  inserted.id,
  'created',
  %(actor)s,
  inserted.updated_at,
  NULL::jsonb,
  to_jsonb(inserted)- '{tenant_id,embedding,embedding_model,embedded_hash,index_lease_until,screened_hash}'::text[]
  FROM inserted),updated_event AS(
  INSERT INTO memory_events(tenant_id,
  id,
  memory_id,
  event_type,
  actor_user_id,
  occurred_at,
  old_memory,
  new_memory)
  SELECT updated.tenant_id,
  gen_random_uuid(),
  updated.id,
  'updated',
  %(actor)s,
  updated.updated_at,
  to_jsonb(current)- '{tenant_id,embedding,embedding_model,embedded_hash,index_lease_until,screened_hash}'::text[],
  to_jsonb(updated)- '{tenant_id,embedding,embedding_model,embedded_hash,index_lease_until,screened_hash}'::text[]
  FROM updated
  JOIN current ON current.id=updated.id),outcomes AS(
  SELECT 'created' AS outcome,n.*
  FROM inserted AS n
  UNION ALL
  SELECT 'updated',n.*
  FROM updated AS n
  UNION ALL
  SELECT 'held',c.*
  FROM current AS c
  WHERE c.source <> %(source)s
  UNION ALL
  SELECT 'moved',c.*
  FROM current AS c
  WHERE c.source=%(source)s AND NOT EXISTS(
  SELECT
  FROM updated))
  SELECT n.outcome,
  n.id,
  n.scope,
  n.owner_id,
  n.key,
  n.value,
  n.pinned,
  n.importance,
  n.source,
  n.tags,
  n.confidence,
  n.metadata,
  n.version,
  n.created_at,
  n.updated_at,
  n.conversation_provider,
  n.conversation_id,
  n.expire_time,
  n.superseded_by,
  n.last_used_time,
  n.valid_start_time,
  n.valid_end_time,
  n.note,
  n.held_for_review,
  n.hold_reason,
  CASE WHEN %(index_model)s::text IS NULL THEN NULL ELSE coalesce(n.embedding_model=%(index_model)s::text AND n.embedded_hash=hashtextextended(n.key || E'\n' || n.value,0)AND n.embedding IS NOT NULL,false)END AS embedded
  FROM outcomes AS n

-- page_keys._FIRST
INSERT INTO page_token_keys (id, secret)
SELECT coalesce(max(id), 0) + 1, %(secret)s FROM page_token_keys
HAVING NOT bool_or(expires_at IS NULL) OR count(*) = 0
ON CONFLICT (id) DO NOTHING

-- page_keys._LOAD
SELECT id, secret, expires_at FROM page_token_keys
WHERE expires_at IS NULL OR expires_at > now()
ORDER BY id

-- page_keys._ROTATE
WITH retired AS (
    UPDATE page_token_keys
    SET expires_at = least(coalesce(expires_at, 'infinity'::timestamptz), now() + %(keep)s)
    WHERE expires_at IS NULL OR expires_at > now()
    RETURNING id
), forgotten AS (
    DELETE FROM page_token_keys WHERE expires_at <= now() RETURNING id
)
INSERT INTO page_token_keys (id, secret)
SELECT coalesce(max(id), 0) + 1, %(secret)s FROM page_token_keys
ON CONFLICT (id) DO NOTHING
RETURNING id

-- prompts.LEXICAL_PART
WITH
terms AS (
    SELECT DISTINCT u.lexeme COLLATE "C" AS term
    FROM unnest(to_tsvector('english', %(rank_query)s)) AS u
),
searched_blocks AS (
    SELECT b.scope, b.agent_id, b.line_count, b.lexeme_total, b.speakers
    FROM archival_vocabulary AS b
    WHERE
    b.tenant_id = %(tenant_id)s
      AND ((b.user_id = %(user_id)s
            AND ((b.scope = 'user' AND b.agent_id = '')
                 OR (b.scope = 'agent' AND b.agent_id = %(agent_id)s)))
           OR (b.user_id = '' AND b.scope = 'workspace'
               AND b.agent_id = %(block_workspace_id)s))
),
sizes AS (
    SELECT coalesce((SELECT sum(line_count) FROM searched_blocks), 0)::float8 AS lines,
           coalesce((SELECT sum(lexeme_total) FROM searched_blocks), 0)::float8 AS lexemes,
           (SELECT count(*) FROM (
                SELECT
                  FROM memories AS m
                  WHERE %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
                LIMIT %(rank_memory_bound)s) AS c)::float8 AS memories
),
scanned AS (
    SELECT lines <= %(rank_scan)s AS lines, memories <= %(rank_scan)s AS memories FROM sizes
),
memory_docs AS (
    SELECT 'memory' AS kind, m.scope,
           CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           CASE WHEN m.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           m.id AS memory_id,
             to_tsvector('english'::regconfig, (m.key::text || ' ') || m.value) AS lexemes,
             row_number() OVER (
             ORDER BY m.id) AS ord
    FROM memories AS m
    WHERE (
      SELECT memories
      FROM scanned) AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
),
term_lines AS (
    SELECT t.term, sum(s.lines) AS lines
    FROM terms AS t CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = t.term
    GROUP BY t.term
),
memory_lexemes AS (
    SELECT u.lexeme COLLATE "C" AS lexeme, count(*) AS docs
    FROM memory_docs AS d, unnest(d.lexemes) AS u
    GROUP BY 1
),
missing AS (
    SELECT t.term FROM terms AS t
    WHERE length(t.term) >= 4
      AND t.term NOT IN (SELECT term FROM term_lines)
      AND t.term NOT IN (SELECT lexeme FROM memory_lexemes)
    ORDER BY length(t.term) DESC, t.term
    LIMIT 32
),
close AS (
    SELECT m.term, s.lexeme, sum(s.lines) AS lines
    FROM missing AS m CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s
      ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id
     AND s.lexeme >= left(m.term, 2)
     AND s.lexeme < left(m.term, 2) || chr(1114111)
    WHERE similarity(s.lexeme, m.term) >= 0.4
    GROUP BY m.term, s.lexeme
    UNION ALL
    SELECT m.term, x.lexeme, 0
    FROM missing AS m, memory_lexemes AS x
    WHERE starts_with(x.lexeme, left(m.term, 2))
      AND similarity(x.lexeme, m.term) >= 0.4
),
lexicon AS (
    SELECT t.term, t.term AS lexeme, 1.0::float8 AS weight, coalesce(x.lines, 0)::float8 AS lines
    FROM terms AS t LEFT JOIN term_lines AS x USING (term)
    UNION ALL
    SELECT term, lexeme, similarity(lexeme, term)::float8, sum(lines)::float8
    FROM close GROUP BY term, lexeme
),
df AS (
    SELECT x.term, sum(x.lines + coalesce(m.docs, 0)) AS df
    FROM lexicon AS x LEFT JOIN memory_lexemes AS m USING (lexeme)
    GROUP BY x.term
),
stats AS (
    SELECT s.lines + s.memories AS n,
           greatest(CASE WHEN s.lines > 0 THEN s.lexemes / s.lines
                         ELSE (SELECT avg(length(lexemes)) FROM memory_docs) END, 1)::float8
               AS avgdl
    FROM sizes AS s
),
idf AS (
    SELECT t.term, ln(1 + (s.n - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS idf
    FROM terms AS t LEFT JOIN df USING (term) CROSS JOIN stats AS s
),
best AS (
    SELECT sum(idf) AS top FROM idf
),
chosen AS (
    SELECT lexeme, row_number() OVER (ORDER BY lines, lexeme) AS rarity FROM (
        SELECT lexeme, lines, sum(lines) OVER (ORDER BY lines, lexeme) AS upto
        FROM (SELECT lexeme, max(lines) AS lines FROM lexicon GROUP BY lexeme) AS x
    ) AS y
    WHERE upto - lines < %(rank_cap)s
),
line_docs AS (
    SELECT 'line' AS kind, l.scope, l.agent_id, l.ordinal::bigint AS ord, l.lexemes
    FROM archival_lines AS l
    WHERE (SELECT lines FROM scanned) AND
    l.tenant_id = %(tenant_id)s
      AND ((l.user_id = %(user_id)s
            AND ((l.scope = 'user' AND l.agent_id = '')
                 OR (l.scope = 'agent' AND l.agent_id = %(agent_id)s)))
           OR (l.user_id = '' AND l.scope = 'workspace'
               AND l.agent_id = %(block_workspace_id)s))
      AND ts_match_vq(l.lexemes, (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery
                                  FROM (SELECT DISTINCT lexeme FROM lexicon) AS x))
    UNION ALL
    SELECT 'line', l.scope, l.agent_id, l.ordinal::bigint, l.lexemes
    FROM (
        SELECT p.scope, p.agent_id, p.ord, min(p.rarity) AS rarity
        FROM (
            SELECT b.scope, b.agent_id, o.ord, c.rarity
            FROM chosen AS c
            CROSS JOIN searched_blocks AS b
            JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = c.lexeme
            CROSS JOIN LATERAL unnest(s.ordinals[1:%(rank_cap)s]) AS o(ord)
            WHERE NOT (SELECT lines FROM scanned)
        ) AS p
        GROUP BY p.scope, p.agent_id, p.ord
        ORDER BY rarity, p.ord
        LIMIT %(rank_cap)s
    ) AS x
    JOIN archival_lines AS l ON l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN x.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND l.scope = x.scope AND l.agent_id = x.agent_id AND l.ordinal = x.ord
),
docs AS (
    SELECT kind, scope, agent_id, ord, lexemes FROM line_docs
    UNION ALL
    SELECT kind, scope, agent_id, ord, lexemes FROM memory_docs
),
hits AS (
    SELECT d.kind, d.scope, d.agent_id, d.ord, x.term, x.weight,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf,
           length(d.lexemes)::float8 AS dl
    FROM docs AS d
    CROSS JOIN LATERAL unnest(d.lexemes) AS u
    JOIN lexicon AS x ON x.lexeme = u.lexeme COLLATE "C"
),
scored AS (
    SELECT h.kind, h.scope, h.agent_id, h.ord,
           sum(i.idf * h.weight * h.tf * (1.2 + 1)
               / (h.tf + 1.2 * (1 - 0.4 + 0.4 * h.dl / s.avgdl))) AS own
    FROM hits AS h JOIN idf AS i USING (term) CROSS JOIN stats AS s
    GROUP BY h.kind, h.scope, h.agent_id, h.ord
),
context AS (
    SELECT sc.kind, sc.scope, sc.agent_id, sc.ord + v.step AS ord, max(sc.own * v.share) AS near
    FROM scored AS sc
    JOIN searched_blocks AS k
      ON sc.kind = 'line' AND k.scope = sc.scope AND k.agent_id = sc.agent_id
     AND cardinality(k.speakers) >= 2
    CROSS JOIN (VALUES (-2, 0.5), (-1, 1.0), (1, 1.0), (2, 0.5)) AS v(step, share)
    GROUP BY sc.kind, sc.scope, sc.agent_id, sc.ord + v.step
),
combined AS (
    SELECT coalesce(sc.kind, cx.kind) AS kind, coalesce(sc.scope, cx.scope) AS scope,
           coalesce(sc.agent_id, cx.agent_id) AS agent_id, coalesce(sc.ord, cx.ord) AS ord,
           coalesce(sc.own, 0) + 0.5 * coalesce(cx.near, 0) AS points,
           coalesce(sc.own, 0) AS own
    FROM scored AS sc
    FULL JOIN context AS cx
      ON (cx.kind, cx.scope, cx.agent_id, cx.ord) = (sc.kind, sc.scope, sc.agent_id, sc.ord)
),
ranked AS (
    SELECT c.kind, c.scope, c.agent_id, coalesce(m.workspace_id, '') AS workspace_id, c.ord,
           m.memory_id, c.points / nullif(b.top, 0) AS raw, c.own / nullif(b.top, 0) AS own
    FROM combined AS c
    CROSS JOIN best AS b
    LEFT JOIN searched_blocks AS k
      ON c.kind = 'line' AND k.scope = c.scope AND k.agent_id = c.agent_id
    LEFT JOIN memory_docs AS m
      ON c.kind = 'memory' AND m.ord = c.ord
    WHERE (c.kind = 'line' AND c.ord BETWEEN 1 AND k.line_count) OR m.memory_id IS NOT NULL
),
top AS (
    SELECT scope, agent_id, CASE WHEN kind = 'line' THEN ord ELSE 0 END AS ord, memory_id,
           least(1.0, raw)::float8 AS score, least(1.0, own)::float8 AS own
    FROM ranked
    WHERE raw > 0
    ORDER BY raw DESC, kind, scope, agent_id, ord
    LIMIT 100
)
SELECT (SELECT memories FROM scanned) AS memories_scanned,
       (SELECT lines FROM scanned) AS lines_scanned,
       (SELECT lines FROM sizes)::bigint AS line_count,
       (SELECT memories FROM sizes)::bigint AS memory_count,
    CASE WHEN NOT (SELECT memories FROM scanned) THEN
        (SELECT string_agg(DISTINCT quote_literal(lexeme), ' | ') FROM lexicon)
    END AS memory_query,
    (SELECT coalesce(json_agg(json_build_array(scope, agent_id, ord, memory_id, score, own)),
                     '[]')
     FROM top) AS candidates,
    (SELECT coalesce(array_agg(DISTINCT s.name ORDER BY s.name), '{}')
     FROM searched_blocks AS b, unnest(b.speakers) AS s(name)) AS speakers

-- prompts.RANK
WITH
terms AS (
    SELECT DISTINCT u.lexeme COLLATE "C" AS term
    FROM unnest(to_tsvector('english', %(rank_query)s)) AS u
),
searched_blocks AS (
    SELECT b.scope, b.agent_id, b.line_count, b.lexeme_total, b.speakers
    FROM archival_vocabulary AS b
    WHERE
    b.tenant_id = %(tenant_id)s
      AND ((b.user_id = %(user_id)s
            AND ((b.scope = 'user' AND b.agent_id = '')
                 OR (b.scope = 'agent' AND b.agent_id = %(agent_id)s)))
           OR (b.user_id = '' AND b.scope = 'workspace'
               AND b.agent_id = %(block_workspace_id)s))
),
sizes AS (
    SELECT coalesce((SELECT sum(line_count) FROM searched_blocks), 0)::float8 AS lines,
           coalesce((SELECT sum(lexeme_total) FROM searched_blocks), 0)::float8 AS lexemes,
           (SELECT count(*) FROM (
                SELECT
                  FROM memories AS m
                  WHERE %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
                LIMIT %(rank_memory_bound)s) AS c)::float8 AS memories
),
scanned AS (
    SELECT lines <= %(rank_scan)s AS lines, memories <= %(rank_scan)s AS memories FROM sizes
),
memory_docs AS (
    SELECT 'memory' AS kind, m.scope,
           CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           CASE WHEN m.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           m.id AS memory_id,
             to_tsvector('english'::regconfig, (m.key::text || ' ') || m.value) AS lexemes,
             row_number() OVER (
             ORDER BY m.id) AS ord
    FROM memories AS m
    WHERE (
      SELECT memories
      FROM scanned) AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
),
term_lines AS (
    SELECT t.term, sum(s.lines) AS lines
    FROM terms AS t CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = t.term
    GROUP BY t.term
),
memory_lexemes AS (
    SELECT u.lexeme COLLATE "C" AS lexeme, count(*) AS docs
    FROM memory_docs AS d, unnest(d.lexemes) AS u
    GROUP BY 1
),
missing AS (
    SELECT t.term FROM terms AS t
    WHERE length(t.term) >= 4
      AND t.term NOT IN (SELECT term FROM term_lines)
      AND t.term NOT IN (SELECT lexeme FROM memory_lexemes)
    ORDER BY length(t.term) DESC, t.term
    LIMIT 32
),
close AS (
    SELECT m.term, s.lexeme, sum(s.lines) AS lines
    FROM missing AS m CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s
      ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id
     AND s.lexeme >= left(m.term, 2)
     AND s.lexeme < left(m.term, 2) || chr(1114111)
    WHERE similarity(s.lexeme, m.term) >= 0.4
    GROUP BY m.term, s.lexeme
    UNION ALL
    SELECT m.term, x.lexeme, 0
    FROM missing AS m, memory_lexemes AS x
    WHERE starts_with(x.lexeme, left(m.term, 2))
      AND similarity(x.lexeme, m.term) >= 0.4
),
lexicon AS (
    SELECT t.term, t.term AS lexeme, 1.0::float8 AS weight, coalesce(x.lines, 0)::float8 AS lines
    FROM terms AS t LEFT JOIN term_lines AS x USING (term)
    UNION ALL
    SELECT term, lexeme, similarity(lexeme, term)::float8, sum(lines)::float8
    FROM close GROUP BY term, lexeme
),
df AS (
    SELECT x.term, sum(x.lines + coalesce(m.docs, 0)) AS df
    FROM lexicon AS x LEFT JOIN memory_lexemes AS m USING (lexeme)
    GROUP BY x.term
),
stats AS (
    SELECT s.lines + s.memories AS n,
           greatest(CASE WHEN s.lines > 0 THEN s.lexemes / s.lines
                         ELSE (SELECT avg(length(lexemes)) FROM memory_docs) END, 1)::float8
               AS avgdl
    FROM sizes AS s
),
idf AS (
    SELECT t.term, ln(1 + (s.n - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS idf
    FROM terms AS t LEFT JOIN df USING (term) CROSS JOIN stats AS s
),
best AS (
    SELECT sum(idf) AS top FROM idf
),
chosen AS (
    SELECT lexeme, row_number() OVER (ORDER BY lines, lexeme) AS rarity FROM (
        SELECT lexeme, lines, sum(lines) OVER (ORDER BY lines, lexeme) AS upto
        FROM (SELECT lexeme, max(lines) AS lines FROM lexicon GROUP BY lexeme) AS x
    ) AS y
    WHERE upto - lines < %(rank_cap)s
),
line_docs AS (
    SELECT 'line' AS kind, l.scope, l.agent_id, l.ordinal::bigint AS ord, l.lexemes
    FROM archival_lines AS l
    WHERE (SELECT lines FROM scanned) AND
    l.tenant_id = %(tenant_id)s
      AND ((l.user_id = %(user_id)s
            AND ((l.scope = 'user' AND l.agent_id = '')
                 OR (l.scope = 'agent' AND l.agent_id = %(agent_id)s)))
           OR (l.user_id = '' AND l.scope = 'workspace'
               AND l.agent_id = %(block_workspace_id)s))
      AND ts_match_vq(l.lexemes, (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery
                                  FROM (SELECT DISTINCT lexeme FROM lexicon) AS x))
    UNION ALL
    SELECT 'line', l.scope, l.agent_id, l.ordinal::bigint, l.lexemes
    FROM (
        SELECT p.scope, p.agent_id, p.ord, min(p.rarity) AS rarity
        FROM (
            SELECT b.scope, b.agent_id, o.ord, c.rarity
            FROM chosen AS c
            CROSS JOIN searched_blocks AS b
            JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = c.lexeme
            CROSS JOIN LATERAL unnest(s.ordinals[1:%(rank_cap)s]) AS o(ord)
            WHERE NOT (SELECT lines FROM scanned)
        ) AS p
        GROUP BY p.scope, p.agent_id, p.ord
        ORDER BY rarity, p.ord
        LIMIT %(rank_cap)s
    ) AS x
    JOIN archival_lines AS l ON l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN x.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND l.scope = x.scope AND l.agent_id = x.agent_id AND l.ordinal = x.ord
),
docs AS (
    SELECT kind, scope, agent_id, ord, lexemes FROM line_docs
    UNION ALL
    SELECT kind, scope, agent_id, ord, lexemes FROM memory_docs
),
hits AS (
    SELECT d.kind, d.scope, d.agent_id, d.ord, x.term, x.weight,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf,
           length(d.lexemes)::float8 AS dl
    FROM docs AS d
    CROSS JOIN LATERAL unnest(d.lexemes) AS u
    JOIN lexicon AS x ON x.lexeme = u.lexeme COLLATE "C"
),
scored AS (
    SELECT h.kind, h.scope, h.agent_id, h.ord,
           sum(i.idf * h.weight * h.tf * (1.2 + 1)
               / (h.tf + 1.2 * (1 - 0.4 + 0.4 * h.dl / s.avgdl))) AS own
    FROM hits AS h JOIN idf AS i USING (term) CROSS JOIN stats AS s
    GROUP BY h.kind, h.scope, h.agent_id, h.ord
),
context AS (
    SELECT sc.kind, sc.scope, sc.agent_id, sc.ord + v.step AS ord, max(sc.own * v.share) AS near
    FROM scored AS sc
    JOIN searched_blocks AS k
      ON sc.kind = 'line' AND k.scope = sc.scope AND k.agent_id = sc.agent_id
     AND cardinality(k.speakers) >= 2
    CROSS JOIN (VALUES (-2, 0.5), (-1, 1.0), (1, 1.0), (2, 0.5)) AS v(step, share)
    GROUP BY sc.kind, sc.scope, sc.agent_id, sc.ord + v.step
),
combined AS (
    SELECT coalesce(sc.kind, cx.kind) AS kind, coalesce(sc.scope, cx.scope) AS scope,
           coalesce(sc.agent_id, cx.agent_id) AS agent_id, coalesce(sc.ord, cx.ord) AS ord,
           coalesce(sc.own, 0) + 0.5 * coalesce(cx.near, 0) AS points,
           coalesce(sc.own, 0) AS own
    FROM scored AS sc
    FULL JOIN context AS cx
      ON (cx.kind, cx.scope, cx.agent_id, cx.ord) = (sc.kind, sc.scope, sc.agent_id, sc.ord)
),
ranked AS (
    SELECT c.kind, c.scope, c.agent_id, coalesce(m.workspace_id, '') AS workspace_id, c.ord,
           m.memory_id, c.points / nullif(b.top, 0) AS raw, c.own / nullif(b.top, 0) AS own
    FROM combined AS c
    CROSS JOIN best AS b
    LEFT JOIN searched_blocks AS k
      ON c.kind = 'line' AND k.scope = c.scope AND k.agent_id = c.agent_id
    LEFT JOIN memory_docs AS m
      ON c.kind = 'memory' AND m.ord = c.ord
    WHERE (c.kind = 'line' AND c.ord BETWEEN 1 AND k.line_count) OR m.memory_id IS NOT NULL
),
best_first AS (
    SELECT kind, scope, agent_id, workspace_id, ord, memory_id,
           least(1.0, raw) AS score, raw
    FROM ranked
    WHERE raw > 0 AND least(1.0, raw) >= %(rank_min_score)s
      AND least(1.0, own) >= %(rank_min_own_words)s
    ORDER BY raw DESC, kind, scope, agent_id, ord
    LIMIT %(rank_limit)s
),
found AS (
    SELECT b.kind, b.scope, b.agent_id, b.workspace_id,
           coalesce(l.line_number, 0) AS line_number, b.memory_id,
           coalesce(l.content, CASE
    WHEN m.source = 'manual' AND m.key !~ '^memorize:[0-9a-f]{40}$'
    THEN m.key || ': ' || m.value ELSE m.value END) AS content, b.score, b.raw, b.ord
    FROM best_first AS b
    LEFT JOIN archival_lines AS l
      ON b.kind = 'line' AND l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
     AND l.scope = b.scope AND l.agent_id = b.agent_id AND l.ordinal = b.ord
    LEFT JOIN memories AS m
      ON b.kind = 'memory' AND m.tenant_id = %(tenant_id)s AND m.id = b.memory_id
)
SELECT (SELECT memories FROM scanned) AS memories_scanned,
       (SELECT lines FROM scanned) AS lines_scanned,
       (SELECT lines FROM sizes)::bigint AS line_count,
       (SELECT memories FROM sizes)::bigint AS memory_count,
    CASE WHEN NOT (SELECT memories FROM scanned) THEN
        (SELECT string_agg(DISTINCT quote_literal(lexeme), ' | ') FROM lexicon)
    END AS memory_query,
    (SELECT coalesce(json_agg(f ORDER BY f.raw DESC, f.kind, f.scope, f.agent_id, f.ord), '[]')
     FROM found AS f) AS matches

-- prompts._BODY
SELECT
    settings.memory_enabled,
    (
    SELECT json_object_agg(scope, content) FROM blocks
    WHERE tenant_id = %(tenant_id)s AND label = 'core'
      AND (user_id, scope, agent_id) IN ((%(user_core)s, 'user', ''),
                                         (%(agent_core)s, 'agent', %(agent_id)s),
                                         (%(workspace_core)s, 'workspace', %(block_workspace_id)s))
) AS cores,
    (
      SELECT json_agg(r
      ORDER BY r.pinned DESC, r.importance DESC, r.key)
      FROM agent_rows AS r) AS agent_rows,
    CASE WHEN (SELECT count(*) FROM agent_rows) = %(agent_cap)s THEN (
        SELECT count(*) FROM (
            SELECT
              FROM memories AS m
              WHERE m.tenant_id = %(tenant_id)s AND m.scope = 'agent' AND m.owner_id = %(agent_id)s AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
              m.valid_end_time) * tstzrange(NULL,
              m.expire_time) @> now()
              LIMIT 10000) AS c)
    END AS agent_total,
    (
      SELECT json_agg(r
      ORDER BY r.pinned DESC, r.importance DESC, r.updated_at DESC, r.id)
      FROM workspace_rows AS r)
    AS workspace_rows,
    CASE WHEN (SELECT count(*) FROM workspace_rows) = %(workspace_cap)s THEN (
        SELECT count(*) FROM (
            SELECT
              FROM memories AS m
              WHERE m.tenant_id = %(tenant_id)s AND m.scope = 'workspace' AND m.owner_id = %(workspace_id)s::text AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
              m.valid_end_time) * tstzrange(NULL,
              m.expire_time) @> now()
              LIMIT 10000) AS c)
    END AS workspace_total,
    CASE WHEN %(decisions)s AND (NOT %(if_reviewed)s OR settings.review_decisions) THEN (
        SELECT coalesce(json_agg(x ORDER BY x.created_at DESC, x.id DESC), '[]')
        FROM (
          SELECT d.id,
          d.run_id,
          d.agent_id,
          d.card_type,
          d.action,
          d.summary,
          NULL::JSONB AS result,
          d.resolution_status,
          d.created_at,
          d.resolved_at,
    (SELECT r.conviction_score FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id
     ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS latest_conviction_score,
    (SELECT count(*) FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id) AS reexamination_count
              FROM decisions AS d
              WHERE d.tenant_id = %(tenant_id)s AND d.agent_id = %(agent_id)s
              ORDER BY d.created_at DESC, d.id DESC
              LIMIT %(decisions_limit)s) AS x)
    END AS decisions,
    %(archival_hint)s AND EXISTS (SELECT FROM archival_vocabulary AS v WHERE
    v.tenant_id = %(tenant_id)s
      AND ((v.user_id = %(user_id)s
            AND ((v.scope = 'user' AND v.agent_id = '')
                 OR (v.scope = 'agent' AND v.agent_id = %(agent_id)s)))
           OR (v.user_id = '' AND v.scope = 'workspace'
               AND v.agent_id = %(block_workspace_id)s))
      AND v.line_count > 0) AS has_archival,
    now() AS read_at

-- prompts._HEAD
WITH settings AS (
    SELECT s.memory_enabled IS TRUE AS memory_enabled,
           s.review_decisions IS TRUE AS review_decisions
    FROM (SELECT) AS one
    LEFT JOIN agent_settings AS s
      ON s.tenant_id = %(tenant_id)s AND s.agent_id = %(agent_id)s
),
agent_rows AS (
    SELECT m.key,
      m.value,
      m.source,
      m.pinned,
      m.importance,
      m.updated_at,
      m.id,
      m.last_used_time,
      m.updated_by,
      m.valid_start_time,
      m.valid_end_time,
      m.text_by
      FROM memories AS m, settings
    WHERE settings.memory_enabled AND m.tenant_id = %(tenant_id)s AND m.scope = 'agent' AND m.owner_id = %(agent_id)s AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
      m.valid_end_time) * tstzrange(NULL,
      m.expire_time) @> now()
    ORDER BY m.pinned DESC, m.importance DESC, m.key
    LIMIT %(agent_cap)s
),
workspace_rows AS (
    SELECT m.key,
      m.value,
      m.source,
      m.pinned,
      m.importance,
      m.updated_at,
      m.id,
      m.last_used_time,
      m.updated_by,
      m.valid_start_time,
      m.valid_end_time,
      m.text_by
      FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.scope = 'workspace' AND m.owner_id = %(workspace_id)s::text AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
      m.valid_end_time) * tstzrange(NULL,
      m.expire_time) @> now()
    ORDER BY m.pinned DESC, m.importance DESC, m.updated_at DESC, m.id
    LIMIT %(workspace_cap)s
)

-- prompts._PLAIN[False]
WITH settings AS(
  SELECT s.memory_enabled IS TRUE AS memory_enabled,s.review_decisions IS TRUE AS review_decisions
  FROM(
  SELECT)AS one
  LEFT
  JOIN agent_settings AS s ON s.tenant_id=%(tenant_id)s AND s.agent_id=%(agent_id)s),agent_rows AS(
  SELECT m.key,
  m.value,
  m.source,
  m.pinned,
  m.importance,
  m.updated_at,
  m.id,
  m.last_used_time,
  m.updated_by,
  m.valid_start_time,
  m.valid_end_time,
  m.text_by
  FROM memories AS m,settings
  WHERE settings.memory_enabled AND m.tenant_id=%(tenant_id)s AND m.scope='agent' AND m.owner_id=%(agent_id)s AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
  m.valid_end_time)*tstzrange(NULL,
  m.expire_time)@>now()
  ORDER BY m.pinned DESC,m.importance DESC,m.key
  LIMIT %(agent_cap)s),workspace_rows AS(
  SELECT m.key,
  m.value,
  m.source,
  m.pinned,
  m.importance,
  m.updated_at,
  m.id,
  m.last_used_time,
  m.updated_by,
  m.valid_start_time,
  m.valid_end_time,
  m.text_by
  FROM memories AS m
  WHERE m.tenant_id=%(tenant_id)s AND m.scope='workspace' AND m.owner_id=%(workspace_id)s::text AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
  m.valid_end_time)*tstzrange(NULL,
  m.expire_time)@>now()
  ORDER BY m.pinned DESC,m.importance DESC,m.updated_at DESC,m.id
  LIMIT %(workspace_cap)s)
  SELECT settings.memory_enabled,(
  SELECT json_object_agg(scope,content)
  FROM blocks
  WHERE tenant_id=%(tenant_id)s AND label='core' AND(user_id,scope,agent_id)IN((%(user_core)s,'user',''),(%(agent_core)s,'agent',%(agent_id)s),(%(workspace_core)s,'workspace',%(block_workspace_id)s)))AS cores,
  (
  SELECT json_agg(r
  ORDER BY r.pinned DESC,r.importance DESC,r.key)
  FROM agent_rows AS r)AS agent_rows,CASE WHEN(
  SELECT count(*)
  FROM agent_rows)=%(agent_cap)s THEN(
  SELECT count(*)
  FROM(
  SELECT
  FROM memories AS m
  WHERE m.tenant_id=%(tenant_id)s AND m.scope='agent' AND m.owner_id=%(agent_id)s AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
  m.valid_end_time)*tstzrange(NULL,
  m.expire_time)@>now()
  LIMIT 10000)AS c)END AS agent_total,(
  SELECT json_agg(r
  ORDER BY r.pinned DESC,r.importance DESC,r.updated_at DESC,r.id)
  FROM workspace_rows AS r)AS workspace_rows,CASE WHEN(
  SELECT count(*)
  FROM workspace_rows)=%(workspace_cap)s THEN(
  SELECT count(*)
  FROM(
  SELECT
  FROM memories AS m
  WHERE m.tenant_id=%(tenant_id)s AND m.scope='workspace' AND m.owner_id=%(workspace_id)s::text AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
  m.valid_end_time)*tstzrange(NULL,
  m.expire_time)@>now()
  LIMIT 10000)AS c)END AS workspace_total,
  CASE WHEN %(decisions)s AND(NOT %(if_reviewed)s OR settings.review_decisions)THEN(
  SELECT coalesce(json_agg(x
  ORDER BY x.created_at DESC,x.id DESC),'[]')
  FROM(
  SELECT d.id,
  d.run_id,
  d.agent_id,
  d.card_type,
  d.action,
  d.summary,
  NULL::JSONB AS result,
  d.resolution_status,
  d.created_at,
  d.resolved_at,
  (
  SELECT r.conviction_score
  FROM reexaminations AS r
  WHERE r.tenant_id=%(tenant_id)s AND r.parent_decision_id=d.id
  ORDER BY r.created_at DESC,r.id DESC
  LIMIT 1)AS latest_conviction_score,(
  SELECT count(*)
  FROM reexaminations AS r
  WHERE r.tenant_id=%(tenant_id)s AND r.parent_decision_id=d.id)AS reexamination_count
  FROM decisions AS d
  WHERE d.tenant_id=%(tenant_id)s AND d.agent_id=%(agent_id)s
  ORDER BY d.created_at DESC,d.id DESC
  LIMIT %(decisions_limit)s)AS x)END AS decisions,%(archival_hint)s AND EXISTS(
  SELECT
  FROM archival_vocabulary AS v
  WHERE v.tenant_id=%(tenant_id)s AND((v.user_id=%(user_id)s AND((v.scope='user' AND v.agent_id='')OR(v.scope='agent' AND v.agent_id=%(agent_id)s)))OR(v.user_id='' AND v.scope='workspace' AND v.agent_id=%(block_workspace_id)s))AND v.line_count>0)AS has_archival,
  now()AS read_at,
  ARRAY(
  SELECT id
  FROM agent_rows
  WHERE coalesce(last_used_time,'-infinity')<clock_timestamp()- interval '60s'
  UNION ALL
  SELECT id
  FROM workspace_rows
  WHERE coalesce(last_used_time,'-infinity')<clock_timestamp()- interval '60s')AS unmarked
  FROM settings

-- prompts._PLAIN[True]
WITH settings AS(
  SELECT s.memory_enabled IS TRUE AS memory_enabled,s.review_decisions IS TRUE AS review_decisions
  FROM(
  SELECT)AS one
  LEFT
  JOIN agent_settings AS s ON s.tenant_id=%(tenant_id)s AND s.agent_id=%(agent_id)s),agent_rows AS(
  SELECT m.key,
  m.value,
  m.source,
  m.pinned,
  m.importance,
  m.updated_at,
  m.id,
  m.last_used_time,
  m.updated_by,
  m.valid_start_time,
  m.valid_end_time,
  m.text_by
  FROM memories AS m,settings
  WHERE settings.memory_enabled AND m.tenant_id=%(tenant_id)s AND m.scope='agent' AND m.owner_id=%(agent_id)s AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
  m.valid_end_time)*tstzrange(NULL,
  m.expire_time)@>now()
  ORDER BY m.pinned DESC,m.importance DESC,m.key
  LIMIT %(agent_cap)s),workspace_rows AS(
  SELECT m.key,
  m.value,
  m.source,
  m.pinned,
  m.importance,
  m.updated_at,
  m.id,
  m.last_used_time,
  m.updated_by,
  m.valid_start_time,
  m.valid_end_time,
  m.text_by
  FROM memories AS m
  WHERE m.tenant_id=%(tenant_id)s AND m.scope='workspace' AND m.owner_id=%(workspace_id)s::text AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
  m.valid_end_time)*tstzrange(NULL,
  m.expire_time)@>now()
  ORDER BY m.pinned DESC,m.importance DESC,m.updated_at DESC,m.id
  LIMIT %(workspace_cap)s),used AS(UPDATE memories AS used
  SET last_used_time=clock_timestamp(),expire_time=expiry_after_use(used)
  WHERE used.tenant_id=%(tenant_id)s AND used.id=ANY(ARRAY(
  SELECT x.id
  FROM memories AS x
  WHERE x.tenant_id=%(tenant_id)s AND x.id=ANY(ARRAY(
  SELECT id
  FROM agent_rows
  UNION ALL
  SELECT id
  FROM workspace_rows))AND coalesce(last_used_time,
  '-infinity')<clock_timestamp()- interval '60s' FOR UPDATE SKIP LOCKED)))
  SELECT settings.memory_enabled,(
  SELECT json_object_agg(scope,content)
  FROM blocks
  WHERE tenant_id=%(tenant_id)s AND label='core' AND(user_id,scope,agent_id)IN((%(user_core)s,'user',''),(%(agent_core)s,'agent',%(agent_id)s),(%(workspace_core)s,'workspace',%(block_workspace_id)s)))AS cores,
  (
  SELECT json_agg(r
  ORDER BY r.pinned DESC,r.importance DESC,r.key)
  FROM agent_rows AS r)AS agent_rows,CASE WHEN(
  SELECT count(*)
  FROM agent_rows)=%(agent_cap)s THEN(
  SELECT count(*)
  FROM(
  SELECT
  FROM memories AS m
  WHERE m.tenant_id=%(tenant_id)s AND m.scope='agent' AND m.owner_id=%(agent_id)s AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
  m.valid_end_time)*tstzrange(NULL,
  m.expire_time)@>now()
  LIMIT 10000)AS c)END AS agent_total,(
  SELECT json_agg(r
  ORDER BY r.pinned DESC,r.importance DESC,r.updated_at DESC,r.id)
  FROM workspace_rows AS r)AS workspace_rows,CASE WHEN(
  SELECT count(*)
  FROM workspace_rows)=%(workspace_cap)s THEN(
  SELECT count(*)
  FROM(
  SELECT
  FROM memories AS m
  WHERE m.tenant_id=%(tenant_id)s AND m.scope='workspace' AND m.owner_id=%(workspace_id)s::text AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
  m.valid_end_time)*tstzrange(NULL,
  m.expire_time)@>now()
  LIMIT 10000)AS c)END AS workspace_total,
  CASE WHEN %(decisions)s AND(NOT %(if_reviewed)s OR settings.review_decisions)THEN(
  SELECT coalesce(json_agg(x
  ORDER BY x.created_at DESC,x.id DESC),'[]')
  FROM(
  SELECT d.id,
  d.run_id,
  d.agent_id,
  d.card_type,
  d.action,
  d.summary,
  NULL::JSONB AS result,
  d.resolution_status,
  d.created_at,
  d.resolved_at,
  (
  SELECT r.conviction_score
  FROM reexaminations AS r
  WHERE r.tenant_id=%(tenant_id)s AND r.parent_decision_id=d.id
  ORDER BY r.created_at DESC,r.id DESC
  LIMIT 1)AS latest_conviction_score,(
  SELECT count(*)
  FROM reexaminations AS r
  WHERE r.tenant_id=%(tenant_id)s AND r.parent_decision_id=d.id)AS reexamination_count
  FROM decisions AS d
  WHERE d.tenant_id=%(tenant_id)s AND d.agent_id=%(agent_id)s
  ORDER BY d.created_at DESC,d.id DESC
  LIMIT %(decisions_limit)s)AS x)END AS decisions,%(archival_hint)s AND EXISTS(
  SELECT
  FROM archival_vocabulary AS v
  WHERE v.tenant_id=%(tenant_id)s AND((v.user_id=%(user_id)s AND((v.scope='user' AND v.agent_id='')OR(v.scope='agent' AND v.agent_id=%(agent_id)s)))OR(v.user_id='' AND v.scope='workspace' AND v.agent_id=%(block_workspace_id)s))AND v.line_count>0)AS has_archival,
  now()AS read_at,
  '{}'::uuid[] AS unmarked
  FROM settings

-- prompts._READ[False]
WITH settings AS (
    SELECT s.memory_enabled IS TRUE AS memory_enabled,
           s.review_decisions IS TRUE AS review_decisions
    FROM (SELECT) AS one
    LEFT JOIN agent_settings AS s
      ON s.tenant_id = %(tenant_id)s AND s.agent_id = %(agent_id)s
),
agent_rows AS (
    SELECT m.key,
      m.value,
      m.source,
      m.pinned,
      m.importance,
      m.updated_at,
      m.id,
      m.last_used_time,
      m.updated_by,
      m.valid_start_time,
      m.valid_end_time,
      m.text_by
      FROM memories AS m, settings
    WHERE settings.memory_enabled AND m.tenant_id = %(tenant_id)s AND m.scope = 'agent' AND m.owner_id = %(agent_id)s AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
      m.valid_end_time) * tstzrange(NULL,
      m.expire_time) @> now()
    ORDER BY m.pinned DESC, m.importance DESC, m.key
    LIMIT %(agent_cap)s
),
workspace_rows AS (
    SELECT m.key,
      m.value,
      m.source,
      m.pinned,
      m.importance,
      m.updated_at,
      m.id,
      m.last_used_time,
      m.updated_by,
      m.valid_start_time,
      m.valid_end_time,
      m.text_by
      FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.scope = 'workspace' AND m.owner_id = %(workspace_id)s::text AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
      m.valid_end_time) * tstzrange(NULL,
      m.expire_time) @> now()
    ORDER BY m.pinned DESC, m.importance DESC, m.updated_at DESC, m.id
    LIMIT %(workspace_cap)s
)
SELECT
    settings.memory_enabled,
    (
    SELECT json_object_agg(scope, content) FROM blocks
    WHERE tenant_id = %(tenant_id)s AND label = 'core'
      AND (user_id, scope, agent_id) IN ((%(user_core)s, 'user', ''),
                                         (%(agent_core)s, 'agent', %(agent_id)s),
                                         (%(workspace_core)s, 'workspace', %(block_workspace_id)s))
) AS cores,
    (
      SELECT json_agg(r
      ORDER BY r.pinned DESC, r.importance DESC, r.key)
      FROM agent_rows AS r) AS agent_rows,
    CASE WHEN (SELECT count(*) FROM agent_rows) = %(agent_cap)s THEN (
        SELECT count(*) FROM (
            SELECT
              FROM memories AS m
              WHERE m.tenant_id = %(tenant_id)s AND m.scope = 'agent' AND m.owner_id = %(agent_id)s AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
              m.valid_end_time) * tstzrange(NULL,
              m.expire_time) @> now()
              LIMIT 10000) AS c)
    END AS agent_total,
    (
      SELECT json_agg(r
      ORDER BY r.pinned DESC, r.importance DESC, r.updated_at DESC, r.id)
      FROM workspace_rows AS r)
    AS workspace_rows,
    CASE WHEN (SELECT count(*) FROM workspace_rows) = %(workspace_cap)s THEN (
        SELECT count(*) FROM (
            SELECT
              FROM memories AS m
              WHERE m.tenant_id = %(tenant_id)s AND m.scope = 'workspace' AND m.owner_id = %(workspace_id)s::text AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
              m.valid_end_time) * tstzrange(NULL,
              m.expire_time) @> now()
              LIMIT 10000) AS c)
    END AS workspace_total,
    CASE WHEN %(decisions)s AND (NOT %(if_reviewed)s OR settings.review_decisions) THEN (
        SELECT coalesce(json_agg(x ORDER BY x.created_at DESC, x.id DESC), '[]')
        FROM (
          SELECT d.id,
          d.run_id,
          d.agent_id,
          d.card_type,
          d.action,
          d.summary,
          NULL::JSONB AS result,
          d.resolution_status,
          d.created_at,
          d.resolved_at,
    (SELECT r.conviction_score FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id
     ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS latest_conviction_score,
    (SELECT count(*) FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id) AS reexamination_count
              FROM decisions AS d
              WHERE d.tenant_id = %(tenant_id)s AND d.agent_id = %(agent_id)s
              ORDER BY d.created_at DESC, d.id DESC
              LIMIT %(decisions_limit)s) AS x)
    END AS decisions,
    %(archival_hint)s AND EXISTS (SELECT FROM archival_vocabulary AS v WHERE
    v.tenant_id = %(tenant_id)s
      AND ((v.user_id = %(user_id)s
            AND ((v.scope = 'user' AND v.agent_id = '')
                 OR (v.scope = 'agent' AND v.agent_id = %(agent_id)s)))
           OR (v.user_id = '' AND v.scope = 'workspace'
               AND v.agent_id = %(block_workspace_id)s))
      AND v.line_count > 0) AS has_archival,
    now() AS read_at,
ARRAY(
  SELECT id
  FROM agent_rows
  WHERE coalesce(last_used_time, '-infinity') < clock_timestamp() - interval '60s'
  UNION ALL
  SELECT id
  FROM workspace_rows
  WHERE coalesce(last_used_time, '-infinity') < clock_timestamp() - interval '60s') AS unmarked

-- prompts._READ[True]
WITH settings AS (
    SELECT s.memory_enabled IS TRUE AS memory_enabled,
           s.review_decisions IS TRUE AS review_decisions
    FROM (SELECT) AS one
    LEFT JOIN agent_settings AS s
      ON s.tenant_id = %(tenant_id)s AND s.agent_id = %(agent_id)s
),
agent_rows AS (
    SELECT m.key,
      m.value,
      m.source,
      m.pinned,
      m.importance,
      m.updated_at,
      m.id,
      m.last_used_time,
      m.updated_by,
      m.valid_start_time,
      m.valid_end_time,
      m.text_by
      FROM memories AS m, settings
    WHERE settings.memory_enabled AND m.tenant_id = %(tenant_id)s AND m.scope = 'agent' AND m.owner_id = %(agent_id)s AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
      m.valid_end_time) * tstzrange(NULL,
      m.expire_time) @> now()
    ORDER BY m.pinned DESC, m.importance DESC, m.key
    LIMIT %(agent_cap)s
),
workspace_rows AS (
    SELECT m.key,
      m.value,
      m.source,
      m.pinned,
      m.importance,
      m.updated_at,
      m.id,
      m.last_used_time,
      m.updated_by,
      m.valid_start_time,
      m.valid_end_time,
      m.text_by
      FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.scope = 'workspace' AND m.owner_id = %(workspace_id)s::text AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
      m.valid_end_time) * tstzrange(NULL,
      m.expire_time) @> now()
    ORDER BY m.pinned DESC, m.importance DESC, m.updated_at DESC, m.id
    LIMIT %(workspace_cap)s
),
used AS (
    UPDATE memories AS used
    SET last_used_time = clock_timestamp(), expire_time = expiry_after_use(used)
    WHERE used.tenant_id = %(tenant_id)s AND used.id = ANY(ARRAY(
        SELECT x.id FROM memories AS x
        WHERE x.tenant_id = %(tenant_id)s AND x.id = ANY(ARRAY(
          SELECT id
          FROM agent_rows
          UNION ALL
          SELECT id
          FROM workspace_rows))
          AND coalesce(last_used_time, '-infinity') < clock_timestamp() - interval '60s'
        FOR UPDATE SKIP LOCKED)))
SELECT
    settings.memory_enabled,
    (
    SELECT json_object_agg(scope, content) FROM blocks
    WHERE tenant_id = %(tenant_id)s AND label = 'core'
      AND (user_id, scope, agent_id) IN ((%(user_core)s, 'user', ''),
                                         (%(agent_core)s, 'agent', %(agent_id)s),
                                         (%(workspace_core)s, 'workspace', %(block_workspace_id)s))
) AS cores,
    (
      SELECT json_agg(r
      ORDER BY r.pinned DESC, r.importance DESC, r.key)
      FROM agent_rows AS r) AS agent_rows,
    CASE WHEN (SELECT count(*) FROM agent_rows) = %(agent_cap)s THEN (
        SELECT count(*) FROM (
            SELECT
              FROM memories AS m
              WHERE m.tenant_id = %(tenant_id)s AND m.scope = 'agent' AND m.owner_id = %(agent_id)s AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
              m.valid_end_time) * tstzrange(NULL,
              m.expire_time) @> now()
              LIMIT 10000) AS c)
    END AS agent_total,
    (
      SELECT json_agg(r
      ORDER BY r.pinned DESC, r.importance DESC, r.updated_at DESC, r.id)
      FROM workspace_rows AS r)
    AS workspace_rows,
    CASE WHEN (SELECT count(*) FROM workspace_rows) = %(workspace_cap)s THEN (
        SELECT count(*) FROM (
            SELECT
              FROM memories AS m
              WHERE m.tenant_id = %(tenant_id)s AND m.scope = 'workspace' AND m.owner_id = %(workspace_id)s::text AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
              m.valid_end_time) * tstzrange(NULL,
              m.expire_time) @> now()
              LIMIT 10000) AS c)
    END AS workspace_total,
    CASE WHEN %(decisions)s AND (NOT %(if_reviewed)s OR settings.review_decisions) THEN (
        SELECT coalesce(json_agg(x ORDER BY x.created_at DESC, x.id DESC), '[]')
        FROM (
          SELECT d.id,
          d.run_id,
          d.agent_id,
          d.card_type,
          d.action,
          d.summary,
          NULL::JSONB AS result,
          d.resolution_status,
          d.created_at,
          d.resolved_at,
    (SELECT r.conviction_score FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id
     ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS latest_conviction_score,
    (SELECT count(*) FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id) AS reexamination_count
              FROM decisions AS d
              WHERE d.tenant_id = %(tenant_id)s AND d.agent_id = %(agent_id)s
              ORDER BY d.created_at DESC, d.id DESC
              LIMIT %(decisions_limit)s) AS x)
    END AS decisions,
    %(archival_hint)s AND EXISTS (SELECT FROM archival_vocabulary AS v WHERE
    v.tenant_id = %(tenant_id)s
      AND ((v.user_id = %(user_id)s
            AND ((v.scope = 'user' AND v.agent_id = '')
                 OR (v.scope = 'agent' AND v.agent_id = %(agent_id)s)))
           OR (v.user_id = '' AND v.scope = 'workspace'
               AND v.agent_id = %(block_workspace_id)s))
      AND v.line_count > 0) AS has_archival,
    now() AS read_at,
'{}'::uuid[] AS unmarked

-- prompts._READ_AT
WITH settings AS(
  SELECT s.memory_enabled IS TRUE AS memory_enabled,s.review_decisions IS TRUE AS review_decisions
  FROM(
  SELECT)AS one
  LEFT
  JOIN agent_settings AS s ON s.tenant_id=%(tenant_id)s AND s.agent_id=%(agent_id)s),agent_rows AS(
  SELECT m.key,
  m.value,
  m.source,
  m.pinned,
  m.importance,
  m.updated_at,
  m.id,
  m.last_used_time,
  m.updated_by,
  m.valid_start_time,
  m.valid_end_time,
  m.text_by
  FROM(
  SELECT r.*
  FROM(
  SELECT DISTINCT ON(e.memory_id)e.tenant_id,e.memory_id,e.new_memory
  FROM memory_events AS e
  WHERE e.tenant_id=%(tenant_id)s AND(coalesce(e.new_memory,e.old_memory)->> 'owner_id')IN(%(agent_id)s,
  coalesce(%(workspace_id)s::text,%(agent_id)s))AND e.occurred_at <= %(as_of)s
  ORDER BY e.memory_id,e.occurred_at DESC,e.id DESC)AS e
  LEFT
  JOIN memories AS x ON x.tenant_id=%(tenant_id)s AND x.id=e.memory_id
  CROSS
  JOIN LATERAL jsonb_populate_record(NULL::memories,
  e.new_memory || jsonb_build_object('tenant_id',e.tenant_id,'held_for_review',coalesce((e.new_memory ->> 'held_for_review')::boolean,false)OR coalesce(x.held_for_review,false),'hold_reason',CASE WHEN coalesce((e.new_memory ->> 'held_for_review')::boolean,false)THEN e.new_memory ->> 'hold_reason' ELSE x.hold_reason END,'text_by',CASE WHEN e.new_memory ? 'text_by' THEN e.new_memory ->> 'text_by' WHEN e.new_memory ->> 'source'='manual' THEN e.new_memory ->> 'updated_by' END,'expire_time',greatest((e.new_memory ->> 'expire_time')::timestamptz,CASE WHEN e.new_memory ->> 'expire_time' IS NOT NULL THEN x.expire_time END)))AS r
  WHERE e.new_memory IS NOT NULL AND(x.expire_time IS NULL OR x.expire_time>statement_timestamp()))AS m,
  settings
  WHERE settings.memory_enabled AND m.tenant_id=%(tenant_id)s AND m.scope='agent' AND m.owner_id=%(agent_id)s AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
  m.valid_end_time)*tstzrange(NULL,
  m.expire_time)@>%(as_of)s::timestamptz
  ORDER BY m.pinned DESC,m.importance DESC,m.key
  LIMIT %(agent_cap)s),workspace_rows AS(
  SELECT m.key,
  m.value,
  m.source,
  m.pinned,
  m.importance,
  m.updated_at,
  m.id,
  m.last_used_time,
  m.updated_by,
  m.valid_start_time,
  m.valid_end_time,
  m.text_by
  FROM(
  SELECT r.*
  FROM(
  SELECT DISTINCT ON(e.memory_id)e.tenant_id,e.memory_id,e.new_memory
  FROM memory_events AS e
  WHERE e.tenant_id=%(tenant_id)s AND(coalesce(e.new_memory,e.old_memory)->> 'owner_id')IN(%(agent_id)s,
  coalesce(%(workspace_id)s::text,%(agent_id)s))AND e.occurred_at <= %(as_of)s
  ORDER BY e.memory_id,e.occurred_at DESC,e.id DESC)AS e
  LEFT
  JOIN memories AS x ON x.tenant_id=%(tenant_id)s AND x.id=e.memory_id
  CROSS
  JOIN LATERAL jsonb_populate_record(NULL::memories,
  e.new_memory || jsonb_build_object('tenant_id',e.tenant_id,'held_for_review',coalesce((e.new_memory ->> 'held_for_review')::boolean,false)OR coalesce(x.held_for_review,false),'hold_reason',CASE WHEN coalesce((e.new_memory ->> 'held_for_review')::boolean,false)THEN e.new_memory ->> 'hold_reason' ELSE x.hold_reason END,'text_by',CASE WHEN e.new_memory ? 'text_by' THEN e.new_memory ->> 'text_by' WHEN e.new_memory ->> 'source'='manual' THEN e.new_memory ->> 'updated_by' END,'expire_time',greatest((e.new_memory ->> 'expire_time')::timestamptz,CASE WHEN e.new_memory ->> 'expire_time' IS NOT NULL THEN x.expire_time END)))AS r
  WHERE e.new_memory IS NOT NULL AND(x.expire_time IS NULL OR x.expire_time>statement_timestamp()))AS m
  WHERE m.tenant_id=%(tenant_id)s AND m.scope='workspace' AND m.owner_id=%(workspace_id)s::text AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
  m.valid_end_time)*tstzrange(NULL,
  m.expire_time)@>%(as_of)s::timestamptz
  ORDER BY m.pinned DESC,m.importance DESC,m.updated_at DESC,m.id
  LIMIT %(workspace_cap)s)
  SELECT settings.memory_enabled,(
  SELECT json_object_agg(c.scope,c.content)
  FROM(
  SELECT DISTINCT ON(v.user_id,v.scope,v.agent_id)v.scope,v.agent_id,v.content
  FROM block_versions AS v
  WHERE v.tenant_id=%(tenant_id)s AND v.label='core' AND(v.user_id,
  v.scope,
  v.agent_id)IN((%(user_core)s,'user',''),
  (%(agent_core)s,'agent',%(agent_id)s),
  (%(workspace_core)s,'workspace',%(block_workspace_id)s))AND v.written_at <= %(as_of)s
  ORDER BY v.user_id,v.scope,v.agent_id,v.version DESC)AS c)AS cores,(
  SELECT json_agg(r
  ORDER BY r.pinned DESC,r.importance DESC,r.key)
  FROM agent_rows AS r)AS agent_rows,CASE WHEN(
  SELECT count(*)
  FROM agent_rows)=%(agent_cap)s THEN(
  SELECT count(*)
  FROM(
  SELECT
  FROM(
  SELECT r.*
  FROM(
  SELECT DISTINCT ON(e.memory_id)e.tenant_id,e.memory_id,e.new_memory
  FROM memory_events AS e
  WHERE e.tenant_id=%(tenant_id)s AND(coalesce(e.new_memory,e.old_memory)->> 'owner_id')IN(%(agent_id)s,
  coalesce(%(workspace_id)s::text,%(agent_id)s))AND e.occurred_at <= %(as_of)s
  ORDER BY e.memory_id,e.occurred_at DESC,e.id DESC)AS e
  LEFT
  JOIN memories AS x ON x.tenant_id=%(tenant_id)s AND x.id=e.memory_id
  CROSS
  JOIN LATERAL jsonb_populate_record(NULL::memories,
  e.new_memory || jsonb_build_object('tenant_id',e.tenant_id,'held_for_review',coalesce((e.new_memory ->> 'held_for_review')::boolean,false)OR coalesce(x.held_for_review,false),'hold_reason',CASE WHEN coalesce((e.new_memory ->> 'held_for_review')::boolean,false)THEN e.new_memory ->> 'hold_reason' ELSE x.hold_reason END,'text_by',CASE WHEN e.new_memory ? 'text_by' THEN e.new_memory ->> 'text_by' WHEN e.new_memory ->> 'source'='manual' THEN e.new_memory ->> 'updated_by' END,'expire_time',greatest((e.new_memory ->> 'expire_time')::timestamptz,CASE WHEN e.new_memory ->> 'expire_time' IS NOT NULL THEN x.expire_time END)))AS r
  WHERE e.new_memory IS NOT NULL AND(x.expire_time IS NULL OR x.expire_time>statement_timestamp()))AS m
  WHERE m.tenant_id=%(tenant_id)s AND m.scope='agent' AND m.owner_id=%(agent_id)s AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
  m.valid_end_time)*tstzrange(NULL,
  m.expire_time)@>%(as_of)s::timestamptz
  LIMIT 10000)AS c)END AS agent_total,(
  SELECT json_agg(r
  ORDER BY r.pinned DESC,r.importance DESC,r.updated_at DESC,r.id)
  FROM workspace_rows AS r)AS workspace_rows,CASE WHEN(
  SELECT count(*)
  FROM workspace_rows)=%(workspace_cap)s THEN(
  SELECT count(*)
  FROM(
  SELECT
  FROM(
  SELECT r.*
  FROM(
  SELECT DISTINCT ON(e.memory_id)e.tenant_id,e.memory_id,e.new_memory
  FROM memory_events AS e
  WHERE e.tenant_id=%(tenant_id)s AND(coalesce(e.new_memory,e.old_memory)->> 'owner_id')IN(%(agent_id)s,
  coalesce(%(workspace_id)s::text,%(agent_id)s))AND e.occurred_at <= %(as_of)s
  ORDER BY e.memory_id,e.occurred_at DESC,e.id DESC)AS e
  LEFT
  JOIN memories AS x ON x.tenant_id=%(tenant_id)s AND x.id=e.memory_id
  CROSS
  JOIN LATERAL jsonb_populate_record(NULL::memories,
  e.new_memory || jsonb_build_object('tenant_id',e.tenant_id,'held_for_review',coalesce((e.new_memory ->> 'held_for_review')::boolean,false)OR coalesce(x.held_for_review,false),'hold_reason',CASE WHEN coalesce((e.new_memory ->> 'held_for_review')::boolean,false)THEN e.new_memory ->> 'hold_reason' ELSE x.hold_reason END,'text_by',CASE WHEN e.new_memory ? 'text_by' THEN e.new_memory ->> 'text_by' WHEN e.new_memory ->> 'source'='manual' THEN e.new_memory ->> 'updated_by' END,'expire_time',greatest((e.new_memory ->> 'expire_time')::timestamptz,CASE WHEN e.new_memory ->> 'expire_time' IS NOT NULL THEN x.expire_time END)))AS r
  WHERE e.new_memory IS NOT NULL AND(x.expire_time IS NULL OR x.expire_time>statement_timestamp()))AS m
  WHERE m.tenant_id=%(tenant_id)s AND m.scope='workspace' AND m.owner_id=%(workspace_id)s::text AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
  m.valid_end_time)*tstzrange(NULL,
  m.expire_time)@>%(as_of)s::timestamptz
  LIMIT 10000)AS c)END AS workspace_total,
  CASE WHEN %(decisions)s AND(NOT %(if_reviewed)s OR settings.review_decisions)THEN(
  SELECT coalesce(json_agg(x
  ORDER BY x.created_at DESC,x.id DESC),'[]')
  FROM(
  SELECT d.id,
  d.run_id,
  d.agent_id,
  d.card_type,
  d.action,
  d.summary,
  NULL::JSONB AS result,
  d.resolution_status,
  d.created_at,
  d.resolved_at,
  (
  SELECT r.conviction_score
  FROM reexaminations AS r
  WHERE r.tenant_id=%(tenant_id)s AND r.parent_decision_id=d.id
  ORDER BY r.created_at DESC,r.id DESC
  LIMIT 1)AS latest_conviction_score,(
  SELECT count(*)
  FROM reexaminations AS r
  WHERE r.tenant_id=%(tenant_id)s AND r.parent_decision_id=d.id)AS reexamination_count
  FROM decisions AS d
  WHERE d.tenant_id=%(tenant_id)s AND d.agent_id=%(agent_id)s AND d.created_at <= %(as_of)s
  ORDER BY d.created_at DESC,d.id DESC
  LIMIT %(decisions_limit)s)AS x)END AS decisions,%(archival_hint)s AND EXISTS(
  SELECT
  FROM(
  SELECT DISTINCT ON(v.user_id,v.scope,v.agent_id)v.scope,v.agent_id,v.content
  FROM block_versions AS v
  WHERE v.tenant_id=%(tenant_id)s AND v.label='archival' AND(v.user_id,
  v.scope,
  v.agent_id)IN((%(user_id)s,'user',''),
  (%(user_id)s,'agent',%(agent_id)s),
  ('','workspace',%(block_workspace_id)s))AND v.written_at <= %(as_of)s
  ORDER BY v.user_id,v.scope,v.agent_id,v.version DESC)AS a
  WHERE btrim(a.content,E' \t\n')<> '')AS has_archival,
  %(as_of)s::timestamptz AS read_at,
  '{}'::uuid[] AS unmarked
  FROM settings

-- prompts._SHOWN
SELECT id FROM agent_rows UNION ALL SELECT id FROM workspace_rows

-- prompts._SHOWN_STALE
SELECT id
  FROM agent_rows
  WHERE coalesce(last_used_time, '-infinity') < clock_timestamp() - interval '60s'
  UNION ALL
  SELECT id
  FROM workspace_rows
  WHERE coalesce(last_used_time, '-infinity') < clock_timestamp() - interval '60s'

-- recall.FUSE
WITH lexical AS (
    SELECT x.scope,
      x.agent_id,
      x.ord,
      coalesce(x.memory_id, '00000000-0000-0000-0000-000000000000'::uuid) AS memory_id,
      x.score,
      x.own
    FROM unnest(%(rank_scopes)s::text[], %(rank_agent_ids)s::text[], %(rank_ordinals)s::bigint[],
                %(rank_memory_ids)s::uuid[], %(rank_scores)s::float8[], %(rank_owns)s::float8[])
         AS x(scope, agent_id, ord, memory_id, score, own)
),
near_lines AS (
    SELECT l.scope,
      l.agent_id,
      l.ordinal::bigint AS ord,
      '00000000-0000-0000-0000-000000000000'::uuid AS memory_id
    FROM archival_lines AS l
    WHERE %(rank_lines_read)s AND
    l.tenant_id = %(tenant_id)s
      AND ((l.user_id = %(user_id)s
            AND ((l.scope = 'user' AND l.agent_id = '')
                 OR (l.scope = 'agent' AND l.agent_id = %(agent_id)s)))
           OR (l.user_id = '' AND l.scope = 'workspace'
               AND l.agent_id = %(block_workspace_id)s))
      AND l.embedding_model = %(rank_model)s AND l.embedded_hash = hashtextextended(l.content,
        0) AND l.embedding IS NOT NULL
    ORDER BY l.embedding::halfvec <=> %(rank_vector)s::halfvec
    LIMIT 100
),
near_memories AS (
    SELECT m.scope, CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           0::bigint AS ord, m.id AS memory_id
    FROM memories AS m
    WHERE %(rank_memories_read)s AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
      AND m.embedding_model = %(rank_model)s AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value,
        0) AND m.embedding IS NOT NULL
    ORDER BY m.embedding::halfvec <=> %(rank_vector)s::halfvec
    LIMIT 100
),
near_given AS (
    SELECT x.scope,
      x.agent_id,
      x.ord,
      coalesce(x.memory_id, '00000000-0000-0000-0000-000000000000'::uuid) AS memory_id
    FROM unnest(%(rank_near_scopes)s::text[], %(rank_near_agent_ids)s::text[],
                %(rank_near_ordinals)s::bigint[], %(rank_near_memory_ids)s::uuid[])
         AS x(scope, agent_id, ord, memory_id)
),
conversations AS (
    SELECT v.scope, v.agent_id
    FROM archival_vocabulary AS v
    WHERE
    v.tenant_id = %(tenant_id)s
      AND ((v.user_id = %(user_id)s
            AND ((v.scope = 'user' AND v.agent_id = '')
                 OR (v.scope = 'agent' AND v.agent_id = %(agent_id)s)))
           OR (v.user_id = '' AND v.scope = 'workspace'
               AND v.agent_id = %(block_workspace_id)s))
      AND cardinality(v.speakers) >= 2
),
candidates AS (
    SELECT scope, agent_id, ord, memory_id, max(score) AS lexical, max(own) AS own
    FROM (
        SELECT scope, agent_id, ord, memory_id, score, own FROM lexical
        UNION ALL SELECT scope, agent_id, ord, memory_id, NULL, NULL FROM near_lines
        UNION ALL SELECT scope, agent_id, ord, memory_id, NULL, NULL FROM near_memories
        UNION ALL SELECT scope, agent_id, ord, memory_id, NULL, NULL FROM near_given
    ) AS x
    GROUP BY scope, agent_id, ord, memory_id
),
line_cosines AS (
    SELECT * FROM (
        SELECT l.scope, l.agent_id, l.ordinal::bigint AS ord, w.talk,
               (1 - (l.embedding::halfvec <=> %(rank_vector)s::halfvec))::float8 AS cosine
        FROM (SELECT DISTINCT c.scope, c.agent_id, c.ord + s.step AS ord,
                     t.scope IS NOT NULL AS talk
              FROM candidates AS c
              CROSS JOIN (VALUES (-1), (0), (1)) AS s(step)
              LEFT JOIN conversations AS t ON t.scope = c.scope AND t.agent_id = c.agent_id
              WHERE c.memory_id = '00000000-0000-0000-0000-000000000000'::uuid AND (s.step = 0 OR t.scope IS NOT NULL)) AS w
        JOIN archival_lines AS l ON l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN w.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND l.scope = w.scope AND l.agent_id = w.agent_id AND l.ordinal = w.ord
        WHERE l.embedding_model = %(rank_model)s AND l.embedded_hash = hashtextextended(l.content,
          0) AND l.embedding IS NOT NULL
    ) AS x
    WHERE cosine <> 'NaN'::float8
),
line_meaning AS (
    SELECT scope, agent_id, ord, '00000000-0000-0000-0000-000000000000'::uuid AS memory_id, cosine,
           cosine + 0.5
               * coalesce(CASE WHEN talk THEN greatest(before, after) END, cosine) AS meaning
    FROM (
        SELECT scope, agent_id, ord, talk, cosine,
               CASE WHEN lag(ord) OVER w = ord - 1 THEN lag(cosine) OVER w END AS before,
               CASE WHEN lead(ord) OVER w = ord + 1 THEN lead(cosine) OVER w END AS after
        FROM line_cosines
        WINDOW w AS (PARTITION BY scope, agent_id ORDER BY ord)
    ) AS x
),
memory_meaning AS (
    SELECT c.scope, c.agent_id, c.ord, c.memory_id,
           (1 - (m.embedding::halfvec <=> %(rank_vector)s::halfvec))::float8 AS cosine
    FROM candidates AS c
    JOIN memories AS m ON m.tenant_id = %(tenant_id)s AND m.id = c.memory_id
    WHERE c.memory_id <> '00000000-0000-0000-0000-000000000000'::uuid AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
      AND m.embedding_model = %(rank_model)s AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value,
        0) AND m.embedding IS NOT NULL
),
-- Each candidate with its words' score, its meaning and its own cosine: one grouping of
-- the rows of both (a hash or a sort, whatever the planner guessed of their numbers).
scored AS (
    SELECT scope, agent_id, ord, memory_id, coalesce(max(lexical), 0) AS lexical,
           coalesce(max(own), 0) AS own, max(meaning) AS meaning, max(cosine) AS cosine
    FROM (
        SELECT scope, agent_id, ord, memory_id, lexical, own, NULL::float8 AS meaning,
               NULL::float8 AS cosine, true AS candidate
        FROM candidates
        UNION ALL
        SELECT scope, agent_id, ord, memory_id, NULL, NULL, meaning, cosine, false
        FROM line_meaning
        UNION ALL
        SELECT scope, agent_id, ord, memory_id, NULL, NULL, (1 + 0.5) * cosine,
               cosine, false
        FROM memory_meaning
        WHERE cosine <> 'NaN'::float8
    ) AS x
    GROUP BY scope, agent_id, ord, memory_id
    HAVING bool_or(candidate)
),
spread AS (
    SELECT min(meaning) AS low, max(meaning) AS high FROM scored
),
-- The score (points), and what a candidate earns by itself on a scale of its own
-- (alone; NULL where it is its own words' score: no vector, or no scale of the model).
fused AS (
    SELECT s.*,
           CASE WHEN s.meaning IS NULL THEN s.lexical
                ELSE (1 - %(rank_weight)s) * s.lexical + %(rank_weight)s
                     * coalesce((s.meaning - p.low) / nullif(p.high - p.low, 0), 1)
           END AS points,
           CASE WHEN %(rank_scaled)s AND s.cosine IS NOT NULL
                THEN (1 - %(rank_weight)s) * s.own + %(rank_weight)s
                     * least(1.0, greatest(0.0, (s.cosine - %(rank_unrelated)s)
                                                / (%(rank_answering)s - %(rank_unrelated)s)))
           END AS alone
    FROM scored AS s CROSS JOIN spread AS p
),
texts AS (
    SELECT CASE WHEN f.memory_id = '00000000-0000-0000-0000-000000000000'::uuid THEN 'line' ELSE 'memory' END AS kind,
           f.scope, f.agent_id,
           CASE WHEN f.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           f.ord, nullif(f.memory_id, '00000000-0000-0000-0000-000000000000'::uuid) AS memory_id,
           coalesce(l.line_number, 0) AS line_number,
           coalesce(l.content, CASE
    WHEN m.source = 'manual' AND m.key !~ '^memorize:[0-9a-f]{40}$'
    THEN m.key || ': ' || m.value ELSE m.value END) AS content,
           f.own, f.alone,
           f.points * CASE WHEN %(rank_speaker)s <> ''
                            AND substring(l.content FROM %(speaker_pattern)s) = %(rank_speaker)s
                           THEN 1.5 ELSE 1 END AS raw
    FROM fused AS f
    LEFT JOIN archival_lines AS l
      ON f.memory_id = '00000000-0000-0000-0000-000000000000'::uuid AND l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN f.scope = 'workspace' THEN '' ELSE %(user_id)s END
     AND l.scope = f.scope AND l.agent_id = f.agent_id AND l.ordinal = f.ord
    LEFT JOIN memories AS m
      ON f.memory_id <> '00000000-0000-0000-0000-000000000000'::uuid AND m.tenant_id = %(tenant_id)s AND m.id = f.memory_id
     AND NOT m.held_for_review
    WHERE l.content IS NOT NULL OR m.id IS NOT NULL
),
-- The best match's points, against what it earns by itself on the model's scale (NULL
-- where it has no vector, or the model no scale): the meaning half of the points is
-- spread over the candidates, so the best always has all of it, however far it is.
best AS (
    SELECT raw, alone FROM texts WHERE raw > 0 ORDER BY raw DESC, kind, scope, agent_id, ord
    LIMIT 1
),
-- Scores are the points brought down, all in one ratio (the order stays), until the
-- best match's is what it earns by itself: a query nothing answers scores low.
scaled AS (
    SELECT t.*, least(1.0, t.raw * coalesce(
               (SELECT least(1.0, b.alone / b.raw) FROM best AS b WHERE b.alone IS NOT NULL),
               1.0)) AS score
    FROM texts AS t
),
found AS (
    SELECT kind, scope, agent_id, workspace_id, line_number, memory_id, content,
           score, raw, ord
    FROM scaled
    WHERE raw > 0 AND score >= %(rank_min_score)s
      AND CASE WHEN alone IS NULL THEN own >= %(rank_min_own_words)s
               ELSE alone >= %(rank_min_own)s END
    ORDER BY raw DESC, kind, scope, agent_id, ord, memory_id
    LIMIT %(rank_limit)s
)

-- recall.FUSE_ORDERED
WITH lexical AS (
    SELECT x.scope,
      x.agent_id,
      x.ord,
      coalesce(x.memory_id, '00000000-0000-0000-0000-000000000000'::uuid) AS memory_id,
      x.score,
      x.own
    FROM unnest(%(rank_scopes)s::text[], %(rank_agent_ids)s::text[], %(rank_ordinals)s::bigint[],
                %(rank_memory_ids)s::uuid[], %(rank_scores)s::float8[], %(rank_owns)s::float8[])
         AS x(scope, agent_id, ord, memory_id, score, own)
),
near_lines AS (
    SELECT l.scope,
      l.agent_id,
      l.ordinal::bigint AS ord,
      '00000000-0000-0000-0000-000000000000'::uuid AS memory_id
    FROM archival_lines AS l
    WHERE %(rank_lines_read)s AND
    l.tenant_id = %(tenant_id)s
      AND ((l.user_id = %(user_id)s
            AND ((l.scope = 'user' AND l.agent_id = '')
                 OR (l.scope = 'agent' AND l.agent_id = %(agent_id)s)))
           OR (l.user_id = '' AND l.scope = 'workspace'
               AND l.agent_id = %(block_workspace_id)s))
      AND l.embedding_model = %(rank_model)s AND l.embedded_hash = hashtextextended(l.content,
        0) AND l.embedding IS NOT NULL
    ORDER BY l.embedding::halfvec <=> %(rank_vector)s::halfvec
    LIMIT 100
),
near_memories AS (
    SELECT m.scope, CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           0::bigint AS ord, m.id AS memory_id
    FROM memories AS m
    WHERE %(rank_memories_read)s AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
      AND m.embedding_model = %(rank_model)s AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value,
        0) AND m.embedding IS NOT NULL
    ORDER BY m.embedding::halfvec <=> %(rank_vector)s::halfvec
    LIMIT 100
),
near_given AS (
    SELECT x.scope,
      x.agent_id,
      x.ord,
      coalesce(x.memory_id, '00000000-0000-0000-0000-000000000000'::uuid) AS memory_id
    FROM unnest(%(rank_near_scopes)s::text[], %(rank_near_agent_ids)s::text[],
                %(rank_near_ordinals)s::bigint[], %(rank_near_memory_ids)s::uuid[])
         AS x(scope, agent_id, ord, memory_id)
),
conversations AS (
    SELECT v.scope, v.agent_id
    FROM archival_vocabulary AS v
    WHERE
    v.tenant_id = %(tenant_id)s
      AND ((v.user_id = %(user_id)s
            AND ((v.scope = 'user' AND v.agent_id = '')
                 OR (v.scope = 'agent' AND v.agent_id = %(agent_id)s)))
           OR (v.user_id = '' AND v.scope = 'workspace'
               AND v.agent_id = %(block_workspace_id)s))
      AND cardinality(v.speakers) >= 2
),
candidates AS (
    SELECT scope, agent_id, ord, memory_id, max(score) AS lexical, max(own) AS own
    FROM (
        SELECT scope, agent_id, ord, memory_id, score, own FROM lexical
        UNION ALL SELECT scope, agent_id, ord, memory_id, NULL, NULL FROM near_lines
        UNION ALL SELECT scope, agent_id, ord, memory_id, NULL, NULL FROM near_memories
        UNION ALL SELECT scope, agent_id, ord, memory_id, NULL, NULL FROM near_given
    ) AS x
    GROUP BY scope, agent_id, ord, memory_id
),
line_cosines AS (
    SELECT * FROM (
        SELECT l.scope, l.agent_id, l.ordinal::bigint AS ord, w.talk,
               (1 - (l.embedding::halfvec <=> %(rank_vector)s::halfvec))::float8 AS cosine
        FROM (SELECT DISTINCT c.scope, c.agent_id, c.ord + s.step AS ord,
                     t.scope IS NOT NULL AS talk
              FROM candidates AS c
              CROSS JOIN (VALUES (-1), (0), (1)) AS s(step)
              LEFT JOIN conversations AS t ON t.scope = c.scope AND t.agent_id = c.agent_id
              WHERE c.memory_id = '00000000-0000-0000-0000-000000000000'::uuid AND (s.step = 0 OR t.scope IS NOT NULL)) AS w
        JOIN archival_lines AS l ON l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN w.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND l.scope = w.scope AND l.agent_id = w.agent_id AND l.ordinal = w.ord
        WHERE l.embedding_model = %(rank_model)s AND l.embedded_hash = hashtextextended(l.content,
          0) AND l.embedding IS NOT NULL
    ) AS x
    WHERE cosine <> 'NaN'::float8
),
line_meaning AS (
    SELECT scope, agent_id, ord, '00000000-0000-0000-0000-000000000000'::uuid AS memory_id, cosine,
           cosine + 0.5
               * coalesce(CASE WHEN talk THEN greatest(before, after) END, cosine) AS meaning
    FROM (
        SELECT scope, agent_id, ord, talk, cosine,
               CASE WHEN lag(ord) OVER w = ord - 1 THEN lag(cosine) OVER w END AS before,
               CASE WHEN lead(ord) OVER w = ord + 1 THEN lead(cosine) OVER w END AS after
        FROM line_cosines
        WINDOW w AS (PARTITION BY scope, agent_id ORDER BY ord)
    ) AS x
),
memory_meaning AS (
    SELECT c.scope, c.agent_id, c.ord, c.memory_id,
           (1 - (m.embedding::halfvec <=> %(rank_vector)s::halfvec))::float8 AS cosine
    FROM candidates AS c
    JOIN memories AS m ON m.tenant_id = %(tenant_id)s AND m.id = c.memory_id
    WHERE c.memory_id <> '00000000-0000-0000-0000-000000000000'::uuid AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
      AND m.embedding_model = %(rank_model)s AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value,
        0) AND m.embedding IS NOT NULL
),
-- Each candidate with its words' score, its meaning and its own cosine: one grouping of
-- the rows of both (a hash or a sort, whatever the planner guessed of their numbers).
scored AS (
    SELECT scope, agent_id, ord, memory_id, coalesce(max(lexical), 0) AS lexical,
           coalesce(max(own), 0) AS own, max(meaning) AS meaning, max(cosine) AS cosine
    FROM (
        SELECT scope, agent_id, ord, memory_id, lexical, own, NULL::float8 AS meaning,
               NULL::float8 AS cosine, true AS candidate
        FROM candidates
        UNION ALL
        SELECT scope, agent_id, ord, memory_id, NULL, NULL, meaning, cosine, false
        FROM line_meaning
        UNION ALL
        SELECT scope, agent_id, ord, memory_id, NULL, NULL, (1 + 0.5) * cosine,
               cosine, false
        FROM memory_meaning
        WHERE cosine <> 'NaN'::float8
    ) AS x
    GROUP BY scope, agent_id, ord, memory_id
    HAVING bool_or(candidate)
),
spread AS (
    SELECT min(meaning) AS low, max(meaning) AS high FROM scored
),
-- The score (points), and what a candidate earns by itself on a scale of its own
-- (alone; NULL where it is its own words' score: no vector, or no scale of the model).
fused AS (
    SELECT s.*,
           CASE WHEN s.meaning IS NULL THEN s.lexical
                ELSE (1 - %(rank_weight)s) * s.lexical + %(rank_weight)s
                     * coalesce((s.meaning - p.low) / nullif(p.high - p.low, 0), 1)
           END AS points,
           CASE WHEN %(rank_scaled)s AND s.cosine IS NOT NULL
                THEN (1 - %(rank_weight)s) * s.own + %(rank_weight)s
                     * least(1.0, greatest(0.0, (s.cosine - %(rank_unrelated)s)
                                                / (%(rank_answering)s - %(rank_unrelated)s)))
           END AS alone
    FROM scored AS s CROSS JOIN spread AS p
),
texts AS (
    SELECT CASE WHEN f.memory_id = '00000000-0000-0000-0000-000000000000'::uuid THEN 'line' ELSE 'memory' END AS kind,
           f.scope, f.agent_id,
           CASE WHEN f.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           f.ord, nullif(f.memory_id, '00000000-0000-0000-0000-000000000000'::uuid) AS memory_id,
           coalesce(l.line_number, 0) AS line_number,
           coalesce(l.content, CASE
    WHEN m.source = 'manual' AND m.key !~ '^memorize:[0-9a-f]{40}$'
    THEN m.key || ': ' || m.value ELSE m.value END) AS content,
           f.own, f.alone,
           f.points * CASE WHEN %(rank_speaker)s <> ''
                            AND substring(l.content FROM %(speaker_pattern)s) = %(rank_speaker)s
                           THEN 1.5 ELSE 1 END AS raw
    FROM fused AS f
    LEFT JOIN archival_lines AS l
      ON f.memory_id = '00000000-0000-0000-0000-000000000000'::uuid AND l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN f.scope = 'workspace' THEN '' ELSE %(user_id)s END
     AND l.scope = f.scope AND l.agent_id = f.agent_id AND l.ordinal = f.ord
    LEFT JOIN memories AS m
      ON f.memory_id <> '00000000-0000-0000-0000-000000000000'::uuid AND m.tenant_id = %(tenant_id)s AND m.id = f.memory_id
     AND NOT m.held_for_review
    WHERE l.content IS NOT NULL OR m.id IS NOT NULL
),
-- The best match's points, against what it earns by itself on the model's scale (NULL
-- where it has no vector, or the model no scale): the meaning half of the points is
-- spread over the candidates, so the best always has all of it, however far it is.
best AS (
    SELECT raw, alone FROM texts WHERE raw > 0 ORDER BY raw DESC, kind, scope, agent_id, ord
    LIMIT 1
),
-- Scores are the points brought down, all in one ratio (the order stays), until the
-- best match's is what it earns by itself: a query nothing answers scores low.
scaled AS (
    SELECT t.*, least(1.0, t.raw * coalesce(
               (SELECT least(1.0, b.alone / b.raw) FROM best AS b WHERE b.alone IS NOT NULL),
               1.0)) AS score
    FROM texts AS t
),
found AS (
    SELECT kind, scope, agent_id, workspace_id, line_number, memory_id, content,
           score, raw, ord
    FROM scaled
    WHERE raw > 0 AND score >= %(rank_min_score)s
      AND CASE WHEN alone IS NULL THEN own >= %(rank_min_own_words)s
               ELSE alone >= %(rank_min_own)s END
    ORDER BY raw DESC, kind, scope, agent_id, ord, memory_id
    LIMIT %(rank_limit)s
)
SELECT * FROM found ORDER BY raw DESC, kind, scope, agent_id, ord, memory_id

-- recall.INDEXING_STATUS
SELECT (SELECT count(*) FROM (
            SELECT FROM archival_lines AS l
            WHERE l.tenant_id = %(tenant_id)s
              AND l.embedded_hash IS DISTINCT FROM hashtextextended(l.content, 0)
            LIMIT %(bound)s) AS x) AS lines,
       (SELECT count(*) FROM (
            SELECT FROM memories AS m
            WHERE m.tenant_id = %(tenant_id)s
              AND m.embedded_hash IS DISTINCT
                FROM hashtextextended(m.key || E'\n' || m.value,
                0) AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL
            LIMIT %(bound)s) AS x) AS memories,
       (SELECT count(*) FROM index_workers AS w
        WHERE w.model = %(model)s
          AND w.seen_at > now() - interval '30 seconds') AS workers,
       (SELECT coalesce(sum(w.per_second), 0) FROM index_workers AS w
        WHERE w.model = %(model)s
          AND w.seen_at > now() - interval '30 seconds') AS per_second

-- recall.LEXICAL_PART
WITH
terms AS (
    SELECT DISTINCT u.lexeme COLLATE "C" AS term
    FROM unnest(to_tsvector('english', %(rank_query)s)) AS u
),
searched_blocks AS (
    SELECT b.scope, b.agent_id, b.line_count, b.lexeme_total, b.speakers
    FROM archival_vocabulary AS b
    WHERE
    b.tenant_id = %(tenant_id)s
      AND ((b.user_id = %(user_id)s
            AND ((b.scope = 'user' AND b.agent_id = '')
                 OR (b.scope = 'agent' AND b.agent_id = %(agent_id)s)))
           OR (b.user_id = '' AND b.scope = 'workspace'
               AND b.agent_id = %(block_workspace_id)s))
),
sizes AS (
    SELECT coalesce((SELECT sum(line_count) FROM searched_blocks), 0)::float8 AS lines,
           coalesce((SELECT sum(lexeme_total) FROM searched_blocks), 0)::float8 AS lexemes,
           (SELECT count(*) FROM (
                SELECT
                  FROM memories AS m
                  WHERE %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
                LIMIT %(rank_memory_bound)s) AS c)::float8 AS memories
),
scanned AS (
    SELECT lines <= %(rank_scan)s AS lines, memories <= %(rank_scan)s AS memories FROM sizes
),
memory_docs AS (
    SELECT 'memory' AS kind, m.scope,
           CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           CASE WHEN m.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           m.id AS memory_id,
             to_tsvector('english'::regconfig, (m.key::text || ' ') || m.value) AS lexemes,
             row_number() OVER (
             ORDER BY m.id) AS ord
    FROM memories AS m
    WHERE (
      SELECT memories
      FROM scanned) AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
),
term_lines AS (
    SELECT t.term, sum(s.lines) AS lines
    FROM terms AS t CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = t.term
    GROUP BY t.term
),
memory_lexemes AS (
    SELECT u.lexeme COLLATE "C" AS lexeme, count(*) AS docs
    FROM memory_docs AS d, unnest(d.lexemes) AS u
    GROUP BY 1
),
missing AS (
    SELECT t.term FROM terms AS t
    WHERE length(t.term) >= 4
      AND t.term NOT IN (SELECT term FROM term_lines)
      AND t.term NOT IN (SELECT lexeme FROM memory_lexemes)
    ORDER BY length(t.term) DESC, t.term
    LIMIT 32
),
close AS (
    SELECT m.term, s.lexeme, sum(s.lines) AS lines
    FROM missing AS m CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s
      ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id
     AND s.lexeme >= left(m.term, 2)
     AND s.lexeme < left(m.term, 2) || chr(1114111)
    WHERE similarity(s.lexeme, m.term) >= 0.4
    GROUP BY m.term, s.lexeme
    UNION ALL
    SELECT m.term, x.lexeme, 0
    FROM missing AS m, memory_lexemes AS x
    WHERE starts_with(x.lexeme, left(m.term, 2))
      AND similarity(x.lexeme, m.term) >= 0.4
),
lexicon AS (
    SELECT t.term, t.term AS lexeme, 1.0::float8 AS weight, coalesce(x.lines, 0)::float8 AS lines
    FROM terms AS t LEFT JOIN term_lines AS x USING (term)
    UNION ALL
    SELECT term, lexeme, similarity(lexeme, term)::float8, sum(lines)::float8
    FROM close GROUP BY term, lexeme
),
df AS (
    SELECT x.term, sum(x.lines + coalesce(m.docs, 0)) AS df
    FROM lexicon AS x LEFT JOIN memory_lexemes AS m USING (lexeme)
    GROUP BY x.term
),
stats AS (
    SELECT s.lines + s.memories AS n,
           greatest(CASE WHEN s.lines > 0 THEN s.lexemes / s.lines
                         ELSE (SELECT avg(length(lexemes)) FROM memory_docs) END, 1)::float8
               AS avgdl
    FROM sizes AS s
),
idf AS (
    SELECT t.term, ln(1 + (s.n - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS idf
    FROM terms AS t LEFT JOIN df USING (term) CROSS JOIN stats AS s
),
best AS (
    SELECT sum(idf) AS top FROM idf
),
chosen AS (
    SELECT lexeme, row_number() OVER (ORDER BY lines, lexeme) AS rarity FROM (
        SELECT lexeme, lines, sum(lines) OVER (ORDER BY lines, lexeme) AS upto
        FROM (SELECT lexeme, max(lines) AS lines FROM lexicon GROUP BY lexeme) AS x
    ) AS y
    WHERE upto - lines < %(rank_cap)s
),
line_docs AS (
    SELECT 'line' AS kind, l.scope, l.agent_id, l.ordinal::bigint AS ord, l.lexemes
    FROM archival_lines AS l
    WHERE (SELECT lines FROM scanned) AND
    l.tenant_id = %(tenant_id)s
      AND ((l.user_id = %(user_id)s
            AND ((l.scope = 'user' AND l.agent_id = '')
                 OR (l.scope = 'agent' AND l.agent_id = %(agent_id)s)))
           OR (l.user_id = '' AND l.scope = 'workspace'
               AND l.agent_id = %(block_workspace_id)s))
      AND ts_match_vq(l.lexemes, (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery
                                  FROM (SELECT DISTINCT lexeme FROM lexicon) AS x))
    UNION ALL
    SELECT 'line', l.scope, l.agent_id, l.ordinal::bigint, l.lexemes
    FROM (
        SELECT p.scope, p.agent_id, p.ord, min(p.rarity) AS rarity
        FROM (
            SELECT b.scope, b.agent_id, o.ord, c.rarity
            FROM chosen AS c
            CROSS JOIN searched_blocks AS b
            JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = c.lexeme
            CROSS JOIN LATERAL unnest(s.ordinals[1:%(rank_cap)s]) AS o(ord)
            WHERE NOT (SELECT lines FROM scanned)
        ) AS p
        GROUP BY p.scope, p.agent_id, p.ord
        ORDER BY rarity, p.ord
        LIMIT %(rank_cap)s
    ) AS x
    JOIN archival_lines AS l ON l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN x.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND l.scope = x.scope AND l.agent_id = x.agent_id AND l.ordinal = x.ord
),
docs AS (
    SELECT kind, scope, agent_id, ord, lexemes FROM line_docs
    UNION ALL
    SELECT kind, scope, agent_id, ord, lexemes FROM memory_docs
),
hits AS (
    SELECT d.kind, d.scope, d.agent_id, d.ord, x.term, x.weight,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf,
           length(d.lexemes)::float8 AS dl
    FROM docs AS d
    CROSS JOIN LATERAL unnest(d.lexemes) AS u
    JOIN lexicon AS x ON x.lexeme = u.lexeme COLLATE "C"
),
scored AS (
    SELECT h.kind, h.scope, h.agent_id, h.ord,
           sum(i.idf * h.weight * h.tf * (1.2 + 1)
               / (h.tf + 1.2 * (1 - 0.4 + 0.4 * h.dl / s.avgdl))) AS own
    FROM hits AS h JOIN idf AS i USING (term) CROSS JOIN stats AS s
    GROUP BY h.kind, h.scope, h.agent_id, h.ord
),
context AS (
    SELECT sc.kind, sc.scope, sc.agent_id, sc.ord + v.step AS ord, max(sc.own * v.share) AS near
    FROM scored AS sc
    JOIN searched_blocks AS k
      ON sc.kind = 'line' AND k.scope = sc.scope AND k.agent_id = sc.agent_id
     AND cardinality(k.speakers) >= 2
    CROSS JOIN (VALUES (-2, 0.5), (-1, 1.0), (1, 1.0), (2, 0.5)) AS v(step, share)
    GROUP BY sc.kind, sc.scope, sc.agent_id, sc.ord + v.step
),
combined AS (
    SELECT coalesce(sc.kind, cx.kind) AS kind, coalesce(sc.scope, cx.scope) AS scope,
           coalesce(sc.agent_id, cx.agent_id) AS agent_id, coalesce(sc.ord, cx.ord) AS ord,
           coalesce(sc.own, 0) + 0.5 * coalesce(cx.near, 0) AS points,
           coalesce(sc.own, 0) AS own
    FROM scored AS sc
    FULL JOIN context AS cx
      ON (cx.kind, cx.scope, cx.agent_id, cx.ord) = (sc.kind, sc.scope, sc.agent_id, sc.ord)
),
ranked AS (
    SELECT c.kind, c.scope, c.agent_id, coalesce(m.workspace_id, '') AS workspace_id, c.ord,
           m.memory_id, c.points / nullif(b.top, 0) AS raw, c.own / nullif(b.top, 0) AS own
    FROM combined AS c
    CROSS JOIN best AS b
    LEFT JOIN searched_blocks AS k
      ON c.kind = 'line' AND k.scope = c.scope AND k.agent_id = c.agent_id
    LEFT JOIN memory_docs AS m
      ON c.kind = 'memory' AND m.ord = c.ord
    WHERE (c.kind = 'line' AND c.ord BETWEEN 1 AND k.line_count) OR m.memory_id IS NOT NULL
),
top AS (
    SELECT scope, agent_id, CASE WHEN kind = 'line' THEN ord ELSE 0 END AS ord, memory_id,
           least(1.0, raw)::float8 AS score, least(1.0, own)::float8 AS own
    FROM ranked
    WHERE raw > 0
    ORDER BY raw DESC, kind, scope, agent_id, ord
    LIMIT 100
)
SELECT (SELECT memories FROM scanned) AS memories_scanned,
       (SELECT lines FROM scanned) AS lines_scanned,
       (SELECT lines FROM sizes)::bigint AS line_count,
       (SELECT memories FROM sizes)::bigint AS memory_count,
    CASE WHEN NOT (SELECT memories FROM scanned) THEN
        (SELECT string_agg(DISTINCT quote_literal(lexeme), ' | ') FROM lexicon)
    END AS memory_query,
    (SELECT coalesce(json_agg(json_build_array(scope, agent_id, ord, memory_id, score, own)),
                     '[]')
     FROM top) AS candidates,
    (SELECT coalesce(array_agg(DISTINCT s.name ORDER BY s.name), '{}')
     FROM searched_blocks AS b, unnest(b.speakers) AS s(name)) AS speakers

-- recall.LEXICAL_PART_GIVEN
WITH
terms AS (
    SELECT DISTINCT u.lexeme COLLATE "C" AS term
    FROM unnest(to_tsvector('english', %(rank_query)s)) AS u
),
searched_blocks AS (
    SELECT b.scope, b.agent_id, b.line_count, b.lexeme_total, b.speakers
    FROM archival_vocabulary AS b
    WHERE
    b.tenant_id = %(tenant_id)s
      AND ((b.user_id = %(user_id)s
            AND ((b.scope = 'user' AND b.agent_id = '')
                 OR (b.scope = 'agent' AND b.agent_id = %(agent_id)s)))
           OR (b.user_id = '' AND b.scope = 'workspace'
               AND b.agent_id = %(block_workspace_id)s))
),
sizes AS (
    SELECT coalesce((SELECT sum(line_count) FROM searched_blocks), 0)::float8 AS lines,
           coalesce((SELECT sum(lexeme_total) FROM searched_blocks), 0)::float8 AS lexemes,
           (SELECT count(*) FROM (
                SELECT
                  FROM memories AS m
                  WHERE %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
                LIMIT %(rank_memory_bound)s) AS c)::float8 AS memories
),
scanned AS (
    SELECT lines <= %(rank_scan)s AS lines, memories <= %(rank_scan)s AS memories FROM sizes
),
memory_docs AS (
    SELECT 'memory' AS kind, m.scope,
           CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           CASE WHEN m.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           m.id AS memory_id,
             to_tsvector('english'::regconfig, (m.key::text || ' ') || m.value) AS lexemes,
             row_number() OVER (
             ORDER BY m.id) AS ord
    FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = ANY (%(rank_memory_ids)b::uuid[])
      AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
),
term_lines AS (
    SELECT t.term, sum(s.lines) AS lines
    FROM terms AS t CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = t.term
    GROUP BY t.term
),
memory_lexemes AS (
    SELECT u.lexeme COLLATE "C" AS lexeme, count(*) AS docs
    FROM memory_docs AS d, unnest(d.lexemes) AS u
    GROUP BY 1
),
missing AS (
    SELECT t.term FROM terms AS t
    WHERE length(t.term) >= 4
      AND t.term NOT IN (SELECT term FROM term_lines)
      AND t.term NOT IN (SELECT lexeme FROM memory_lexemes)
    ORDER BY length(t.term) DESC, t.term
    LIMIT 32
),
close AS (
    SELECT m.term, s.lexeme, sum(s.lines) AS lines
    FROM missing AS m CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s
      ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id
     AND s.lexeme >= left(m.term, 2)
     AND s.lexeme < left(m.term, 2) || chr(1114111)
    WHERE similarity(s.lexeme, m.term) >= 0.4
    GROUP BY m.term, s.lexeme
    UNION ALL
    SELECT m.term, x.lexeme, 0
    FROM missing AS m, memory_lexemes AS x
    WHERE starts_with(x.lexeme, left(m.term, 2))
      AND similarity(x.lexeme, m.term) >= 0.4
),
lexicon AS (
    SELECT t.term, t.term AS lexeme, 1.0::float8 AS weight, coalesce(x.lines, 0)::float8 AS lines
    FROM terms AS t LEFT JOIN term_lines AS x USING (term)
    UNION ALL
    SELECT term, lexeme, similarity(lexeme, term)::float8, sum(lines)::float8
    FROM close GROUP BY term, lexeme
),
df AS (
    SELECT x.term, sum(x.lines + coalesce(m.docs, 0)) AS df
    FROM lexicon AS x LEFT JOIN memory_lexemes AS m USING (lexeme)
    GROUP BY x.term
),
stats AS (
    SELECT s.lines + s.memories AS n,
           greatest(CASE WHEN s.lines > 0 THEN s.lexemes / s.lines
                         ELSE (SELECT avg(length(lexemes)) FROM memory_docs) END, 1)::float8
               AS avgdl
    FROM sizes AS s
),
idf AS (
    SELECT t.term, ln(1 + (s.n - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS idf
    FROM terms AS t LEFT JOIN df USING (term) CROSS JOIN stats AS s
),
best AS (
    SELECT sum(idf) AS top FROM idf
),
chosen AS (
    SELECT lexeme, row_number() OVER (ORDER BY lines, lexeme) AS rarity FROM (
        SELECT lexeme, lines, sum(lines) OVER (ORDER BY lines, lexeme) AS upto
        FROM (SELECT lexeme, max(lines) AS lines FROM lexicon GROUP BY lexeme) AS x
    ) AS y
    WHERE upto - lines < %(rank_cap)s
),
line_docs AS (
    SELECT 'line' AS kind, l.scope, l.agent_id, l.ordinal::bigint AS ord, l.lexemes
    FROM archival_lines AS l
    WHERE (SELECT lines FROM scanned) AND
    l.tenant_id = %(tenant_id)s
      AND ((l.user_id = %(user_id)s
            AND ((l.scope = 'user' AND l.agent_id = '')
                 OR (l.scope = 'agent' AND l.agent_id = %(agent_id)s)))
           OR (l.user_id = '' AND l.scope = 'workspace'
               AND l.agent_id = %(block_workspace_id)s))
      AND ts_match_vq(l.lexemes, (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery
                                  FROM (SELECT DISTINCT lexeme FROM lexicon) AS x))
    UNION ALL
    SELECT 'line', l.scope, l.agent_id, l.ordinal::bigint, l.lexemes
    FROM (
        SELECT p.scope, p.agent_id, p.ord, min(p.rarity) AS rarity
        FROM (
            SELECT b.scope, b.agent_id, o.ord, c.rarity
            FROM chosen AS c
            CROSS JOIN searched_blocks AS b
            JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = c.lexeme
            CROSS JOIN LATERAL unnest(s.ordinals[1:%(rank_cap)s]) AS o(ord)
            WHERE NOT (SELECT lines FROM scanned)
        ) AS p
        GROUP BY p.scope, p.agent_id, p.ord
        ORDER BY rarity, p.ord
        LIMIT %(rank_cap)s
    ) AS x
    JOIN archival_lines AS l ON l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN x.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND l.scope = x.scope AND l.agent_id = x.agent_id AND l.ordinal = x.ord
),
docs AS (
    SELECT kind, scope, agent_id, ord, lexemes FROM line_docs
    UNION ALL
    SELECT kind, scope, agent_id, ord, lexemes FROM memory_docs
),
hits AS (
    SELECT d.kind, d.scope, d.agent_id, d.ord, x.term, x.weight,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf,
           length(d.lexemes)::float8 AS dl
    FROM docs AS d
    CROSS JOIN LATERAL unnest(d.lexemes) AS u
    JOIN lexicon AS x ON x.lexeme = u.lexeme COLLATE "C"
),
scored AS (
    SELECT h.kind, h.scope, h.agent_id, h.ord,
           sum(i.idf * h.weight * h.tf * (1.2 + 1)
               / (h.tf + 1.2 * (1 - 0.4 + 0.4 * h.dl / s.avgdl))) AS own
    FROM hits AS h JOIN idf AS i USING (term) CROSS JOIN stats AS s
    GROUP BY h.kind, h.scope, h.agent_id, h.ord
),
context AS (
    SELECT sc.kind, sc.scope, sc.agent_id, sc.ord + v.step AS ord, max(sc.own * v.share) AS near
    FROM scored AS sc
    JOIN searched_blocks AS k
      ON sc.kind = 'line' AND k.scope = sc.scope AND k.agent_id = sc.agent_id
     AND cardinality(k.speakers) >= 2
    CROSS JOIN (VALUES (-2, 0.5), (-1, 1.0), (1, 1.0), (2, 0.5)) AS v(step, share)
    GROUP BY sc.kind, sc.scope, sc.agent_id, sc.ord + v.step
),
combined AS (
    SELECT coalesce(sc.kind, cx.kind) AS kind, coalesce(sc.scope, cx.scope) AS scope,
           coalesce(sc.agent_id, cx.agent_id) AS agent_id, coalesce(sc.ord, cx.ord) AS ord,
           coalesce(sc.own, 0) + 0.5 * coalesce(cx.near, 0) AS points,
           coalesce(sc.own, 0) AS own
    FROM scored AS sc
    FULL JOIN context AS cx
      ON (cx.kind, cx.scope, cx.agent_id, cx.ord) = (sc.kind, sc.scope, sc.agent_id, sc.ord)
),
ranked AS (
    SELECT c.kind, c.scope, c.agent_id, coalesce(m.workspace_id, '') AS workspace_id, c.ord,
           m.memory_id, c.points / nullif(b.top, 0) AS raw, c.own / nullif(b.top, 0) AS own
    FROM combined AS c
    CROSS JOIN best AS b
    LEFT JOIN searched_blocks AS k
      ON c.kind = 'line' AND k.scope = c.scope AND k.agent_id = c.agent_id
    LEFT JOIN memory_docs AS m
      ON c.kind = 'memory' AND m.ord = c.ord
    WHERE (c.kind = 'line' AND c.ord BETWEEN 1 AND k.line_count) OR m.memory_id IS NOT NULL
),
top AS (
    SELECT scope, agent_id, CASE WHEN kind = 'line' THEN ord ELSE 0 END AS ord, memory_id,
           least(1.0, raw)::float8 AS score, least(1.0, own)::float8 AS own
    FROM ranked
    WHERE raw > 0
    ORDER BY raw DESC, kind, scope, agent_id, ord
    LIMIT 100
)
SELECT (SELECT memories FROM scanned) AS memories_scanned,
       (SELECT lines FROM scanned) AS lines_scanned,
       (SELECT lines FROM sizes)::bigint AS line_count,
       (SELECT memories FROM sizes)::bigint AS memory_count,
    CASE WHEN NOT (SELECT memories FROM scanned) THEN
        (SELECT string_agg(DISTINCT quote_literal(lexeme), ' | ') FROM lexicon)
    END AS memory_query,
    (SELECT coalesce(json_agg(json_build_array(scope, agent_id, ord, memory_id, score, own)),
                     '[]')
     FROM top) AS candidates,
    (SELECT coalesce(array_agg(DISTINCT s.name ORDER BY s.name), '{}')
     FROM searched_blocks AS b, unnest(b.speakers) AS s(name)) AS speakers

-- recall.MEMORY_CANDIDATES
SELECT m.id
FROM memories AS m
WHERE m.tenant_id = %(tenant_id)s
  AND (((((m.tenant_id || chr(31)) || m.scope) || chr(31)) || m.owner_id) = %(rank_agent_owner)s OR ((((m.tenant_id || chr(31)) || m.scope) || chr(31)) || m.owner_id) = %(rank_workspace_owner)s)
  AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
  AND to_tsvector('english'::regconfig,
    (m.key::text || ' ') || m.value) @@ %(rank_memory_query)s::tsquery
LIMIT %(rank_cap)s

-- recall.PGVECTOR_INSTALLED
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'vector') AS installed

-- recall.RANK
WITH
terms AS (
    SELECT DISTINCT u.lexeme COLLATE "C" AS term
    FROM unnest(to_tsvector('english', %(rank_query)s)) AS u
),
searched_blocks AS (
    SELECT b.scope, b.agent_id, b.line_count, b.lexeme_total, b.speakers
    FROM archival_vocabulary AS b
    WHERE
    b.tenant_id = %(tenant_id)s
      AND ((b.user_id = %(user_id)s
            AND ((b.scope = 'user' AND b.agent_id = '')
                 OR (b.scope = 'agent' AND b.agent_id = %(agent_id)s)))
           OR (b.user_id = '' AND b.scope = 'workspace'
               AND b.agent_id = %(block_workspace_id)s))
),
sizes AS (
    SELECT coalesce((SELECT sum(line_count) FROM searched_blocks), 0)::float8 AS lines,
           coalesce((SELECT sum(lexeme_total) FROM searched_blocks), 0)::float8 AS lexemes,
           (SELECT count(*) FROM (
                SELECT
                  FROM memories AS m
                  WHERE %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
                LIMIT %(rank_memory_bound)s) AS c)::float8 AS memories
),
scanned AS (
    SELECT lines <= %(rank_scan)s AS lines, memories <= %(rank_scan)s AS memories FROM sizes
),
memory_docs AS (
    SELECT 'memory' AS kind, m.scope,
           CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           CASE WHEN m.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           m.id AS memory_id,
             to_tsvector('english'::regconfig, (m.key::text || ' ') || m.value) AS lexemes,
             row_number() OVER (
             ORDER BY m.id) AS ord
    FROM memories AS m
    WHERE (
      SELECT memories
      FROM scanned) AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
),
term_lines AS (
    SELECT t.term, sum(s.lines) AS lines
    FROM terms AS t CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = t.term
    GROUP BY t.term
),
memory_lexemes AS (
    SELECT u.lexeme COLLATE "C" AS lexeme, count(*) AS docs
    FROM memory_docs AS d, unnest(d.lexemes) AS u
    GROUP BY 1
),
missing AS (
    SELECT t.term FROM terms AS t
    WHERE length(t.term) >= 4
      AND t.term NOT IN (SELECT term FROM term_lines)
      AND t.term NOT IN (SELECT lexeme FROM memory_lexemes)
    ORDER BY length(t.term) DESC, t.term
    LIMIT 32
),
close AS (
    SELECT m.term, s.lexeme, sum(s.lines) AS lines
    FROM missing AS m CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s
      ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id
     AND s.lexeme >= left(m.term, 2)
     AND s.lexeme < left(m.term, 2) || chr(1114111)
    WHERE similarity(s.lexeme, m.term) >= 0.4
    GROUP BY m.term, s.lexeme
    UNION ALL
    SELECT m.term, x.lexeme, 0
    FROM missing AS m, memory_lexemes AS x
    WHERE starts_with(x.lexeme, left(m.term, 2))
      AND similarity(x.lexeme, m.term) >= 0.4
),
lexicon AS (
    SELECT t.term, t.term AS lexeme, 1.0::float8 AS weight, coalesce(x.lines, 0)::float8 AS lines
    FROM terms AS t LEFT JOIN term_lines AS x USING (term)
    UNION ALL
    SELECT term, lexeme, similarity(lexeme, term)::float8, sum(lines)::float8
    FROM close GROUP BY term, lexeme
),
df AS (
    SELECT x.term, sum(x.lines + coalesce(m.docs, 0)) AS df
    FROM lexicon AS x LEFT JOIN memory_lexemes AS m USING (lexeme)
    GROUP BY x.term
),
stats AS (
    SELECT s.lines + s.memories AS n,
           greatest(CASE WHEN s.lines > 0 THEN s.lexemes / s.lines
                         ELSE (SELECT avg(length(lexemes)) FROM memory_docs) END, 1)::float8
               AS avgdl
    FROM sizes AS s
),
idf AS (
    SELECT t.term, ln(1 + (s.n - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS idf
    FROM terms AS t LEFT JOIN df USING (term) CROSS JOIN stats AS s
),
best AS (
    SELECT sum(idf) AS top FROM idf
),
chosen AS (
    SELECT lexeme, row_number() OVER (ORDER BY lines, lexeme) AS rarity FROM (
        SELECT lexeme, lines, sum(lines) OVER (ORDER BY lines, lexeme) AS upto
        FROM (SELECT lexeme, max(lines) AS lines FROM lexicon GROUP BY lexeme) AS x
    ) AS y
    WHERE upto - lines < %(rank_cap)s
),
line_docs AS (
    SELECT 'line' AS kind, l.scope, l.agent_id, l.ordinal::bigint AS ord, l.lexemes
    FROM archival_lines AS l
    WHERE (SELECT lines FROM scanned) AND
    l.tenant_id = %(tenant_id)s
      AND ((l.user_id = %(user_id)s
            AND ((l.scope = 'user' AND l.agent_id = '')
                 OR (l.scope = 'agent' AND l.agent_id = %(agent_id)s)))
           OR (l.user_id = '' AND l.scope = 'workspace'
               AND l.agent_id = %(block_workspace_id)s))
      AND ts_match_vq(l.lexemes, (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery
                                  FROM (SELECT DISTINCT lexeme FROM lexicon) AS x))
    UNION ALL
    SELECT 'line', l.scope, l.agent_id, l.ordinal::bigint, l.lexemes
    FROM (
        SELECT p.scope, p.agent_id, p.ord, min(p.rarity) AS rarity
        FROM (
            SELECT b.scope, b.agent_id, o.ord, c.rarity
            FROM chosen AS c
            CROSS JOIN searched_blocks AS b
            JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = c.lexeme
            CROSS JOIN LATERAL unnest(s.ordinals[1:%(rank_cap)s]) AS o(ord)
            WHERE NOT (SELECT lines FROM scanned)
        ) AS p
        GROUP BY p.scope, p.agent_id, p.ord
        ORDER BY rarity, p.ord
        LIMIT %(rank_cap)s
    ) AS x
    JOIN archival_lines AS l ON l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN x.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND l.scope = x.scope AND l.agent_id = x.agent_id AND l.ordinal = x.ord
),
docs AS (
    SELECT kind, scope, agent_id, ord, lexemes FROM line_docs
    UNION ALL
    SELECT kind, scope, agent_id, ord, lexemes FROM memory_docs
),
hits AS (
    SELECT d.kind, d.scope, d.agent_id, d.ord, x.term, x.weight,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf,
           length(d.lexemes)::float8 AS dl
    FROM docs AS d
    CROSS JOIN LATERAL unnest(d.lexemes) AS u
    JOIN lexicon AS x ON x.lexeme = u.lexeme COLLATE "C"
),
scored AS (
    SELECT h.kind, h.scope, h.agent_id, h.ord,
           sum(i.idf * h.weight * h.tf * (1.2 + 1)
               / (h.tf + 1.2 * (1 - 0.4 + 0.4 * h.dl / s.avgdl))) AS own
    FROM hits AS h JOIN idf AS i USING (term) CROSS JOIN stats AS s
    GROUP BY h.kind, h.scope, h.agent_id, h.ord
),
context AS (
    SELECT sc.kind, sc.scope, sc.agent_id, sc.ord + v.step AS ord, max(sc.own * v.share) AS near
    FROM scored AS sc
    JOIN searched_blocks AS k
      ON sc.kind = 'line' AND k.scope = sc.scope AND k.agent_id = sc.agent_id
     AND cardinality(k.speakers) >= 2
    CROSS JOIN (VALUES (-2, 0.5), (-1, 1.0), (1, 1.0), (2, 0.5)) AS v(step, share)
    GROUP BY sc.kind, sc.scope, sc.agent_id, sc.ord + v.step
),
combined AS (
    SELECT coalesce(sc.kind, cx.kind) AS kind, coalesce(sc.scope, cx.scope) AS scope,
           coalesce(sc.agent_id, cx.agent_id) AS agent_id, coalesce(sc.ord, cx.ord) AS ord,
           coalesce(sc.own, 0) + 0.5 * coalesce(cx.near, 0) AS points,
           coalesce(sc.own, 0) AS own
    FROM scored AS sc
    FULL JOIN context AS cx
      ON (cx.kind, cx.scope, cx.agent_id, cx.ord) = (sc.kind, sc.scope, sc.agent_id, sc.ord)
),
ranked AS (
    SELECT c.kind, c.scope, c.agent_id, coalesce(m.workspace_id, '') AS workspace_id, c.ord,
           m.memory_id, c.points / nullif(b.top, 0) AS raw, c.own / nullif(b.top, 0) AS own
    FROM combined AS c
    CROSS JOIN best AS b
    LEFT JOIN searched_blocks AS k
      ON c.kind = 'line' AND k.scope = c.scope AND k.agent_id = c.agent_id
    LEFT JOIN memory_docs AS m
      ON c.kind = 'memory' AND m.ord = c.ord
    WHERE (c.kind = 'line' AND c.ord BETWEEN 1 AND k.line_count) OR m.memory_id IS NOT NULL
),
best_first AS (
    SELECT kind, scope, agent_id, workspace_id, ord, memory_id,
           least(1.0, raw) AS score, raw
    FROM ranked
    WHERE raw > 0 AND least(1.0, raw) >= %(rank_min_score)s
      AND least(1.0, own) >= %(rank_min_own_words)s
    ORDER BY raw DESC, kind, scope, agent_id, ord
    LIMIT %(rank_limit)s
),
found AS (
    SELECT b.kind, b.scope, b.agent_id, b.workspace_id,
           coalesce(l.line_number, 0) AS line_number, b.memory_id,
           coalesce(l.content, CASE
    WHEN m.source = 'manual' AND m.key !~ '^memorize:[0-9a-f]{40}$'
    THEN m.key || ': ' || m.value ELSE m.value END) AS content, b.score, b.raw, b.ord
    FROM best_first AS b
    LEFT JOIN archival_lines AS l
      ON b.kind = 'line' AND l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
     AND l.scope = b.scope AND l.agent_id = b.agent_id AND l.ordinal = b.ord
    LEFT JOIN memories AS m
      ON b.kind = 'memory' AND m.tenant_id = %(tenant_id)s AND m.id = b.memory_id
)
SELECT (SELECT memories FROM scanned) AS memories_scanned,
       (SELECT lines FROM scanned) AS lines_scanned,
       (SELECT lines FROM sizes)::bigint AS line_count,
       (SELECT memories FROM sizes)::bigint AS memory_count,
    CASE WHEN NOT (SELECT memories FROM scanned) THEN
        (SELECT string_agg(DISTINCT quote_literal(lexeme), ' | ') FROM lexicon)
    END AS memory_query,
    (SELECT coalesce(json_agg(f ORDER BY f.raw DESC, f.kind, f.scope, f.agent_id, f.ord), '[]')
     FROM found AS f) AS matches

-- recall.RANK_GIVEN
WITH
terms AS (
    SELECT DISTINCT u.lexeme COLLATE "C" AS term
    FROM unnest(to_tsvector('english', %(rank_query)s)) AS u
),
searched_blocks AS (
    SELECT b.scope, b.agent_id, b.line_count, b.lexeme_total, b.speakers
    FROM archival_vocabulary AS b
    WHERE
    b.tenant_id = %(tenant_id)s
      AND ((b.user_id = %(user_id)s
            AND ((b.scope = 'user' AND b.agent_id = '')
                 OR (b.scope = 'agent' AND b.agent_id = %(agent_id)s)))
           OR (b.user_id = '' AND b.scope = 'workspace'
               AND b.agent_id = %(block_workspace_id)s))
),
sizes AS (
    SELECT coalesce((SELECT sum(line_count) FROM searched_blocks), 0)::float8 AS lines,
           coalesce((SELECT sum(lexeme_total) FROM searched_blocks), 0)::float8 AS lexemes,
           (SELECT count(*) FROM (
                SELECT
                  FROM memories AS m
                  WHERE %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
                LIMIT %(rank_memory_bound)s) AS c)::float8 AS memories
),
scanned AS (
    SELECT lines <= %(rank_scan)s AS lines, memories <= %(rank_scan)s AS memories FROM sizes
),
memory_docs AS (
    SELECT 'memory' AS kind, m.scope,
           CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           CASE WHEN m.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           m.id AS memory_id,
             to_tsvector('english'::regconfig, (m.key::text || ' ') || m.value) AS lexemes,
             row_number() OVER (
             ORDER BY m.id) AS ord
    FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = ANY (%(rank_memory_ids)b::uuid[])
      AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
),
term_lines AS (
    SELECT t.term, sum(s.lines) AS lines
    FROM terms AS t CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = t.term
    GROUP BY t.term
),
memory_lexemes AS (
    SELECT u.lexeme COLLATE "C" AS lexeme, count(*) AS docs
    FROM memory_docs AS d, unnest(d.lexemes) AS u
    GROUP BY 1
),
missing AS (
    SELECT t.term FROM terms AS t
    WHERE length(t.term) >= 4
      AND t.term NOT IN (SELECT term FROM term_lines)
      AND t.term NOT IN (SELECT lexeme FROM memory_lexemes)
    ORDER BY length(t.term) DESC, t.term
    LIMIT 32
),
close AS (
    SELECT m.term, s.lexeme, sum(s.lines) AS lines
    FROM missing AS m CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s
      ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id
     AND s.lexeme >= left(m.term, 2)
     AND s.lexeme < left(m.term, 2) || chr(1114111)
    WHERE similarity(s.lexeme, m.term) >= 0.4
    GROUP BY m.term, s.lexeme
    UNION ALL
    SELECT m.term, x.lexeme, 0
    FROM missing AS m, memory_lexemes AS x
    WHERE starts_with(x.lexeme, left(m.term, 2))
      AND similarity(x.lexeme, m.term) >= 0.4
),
lexicon AS (
    SELECT t.term, t.term AS lexeme, 1.0::float8 AS weight, coalesce(x.lines, 0)::float8 AS lines
    FROM terms AS t LEFT JOIN term_lines AS x USING (term)
    UNION ALL
    SELECT term, lexeme, similarity(lexeme, term)::float8, sum(lines)::float8
    FROM close GROUP BY term, lexeme
),
df AS (
    SELECT x.term, sum(x.lines + coalesce(m.docs, 0)) AS df
    FROM lexicon AS x LEFT JOIN memory_lexemes AS m USING (lexeme)
    GROUP BY x.term
),
stats AS (
    SELECT s.lines + s.memories AS n,
           greatest(CASE WHEN s.lines > 0 THEN s.lexemes / s.lines
                         ELSE (SELECT avg(length(lexemes)) FROM memory_docs) END, 1)::float8
               AS avgdl
    FROM sizes AS s
),
idf AS (
    SELECT t.term, ln(1 + (s.n - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS idf
    FROM terms AS t LEFT JOIN df USING (term) CROSS JOIN stats AS s
),
best AS (
    SELECT sum(idf) AS top FROM idf
),
chosen AS (
    SELECT lexeme, row_number() OVER (ORDER BY lines, lexeme) AS rarity FROM (
        SELECT lexeme, lines, sum(lines) OVER (ORDER BY lines, lexeme) AS upto
        FROM (SELECT lexeme, max(lines) AS lines FROM lexicon GROUP BY lexeme) AS x
    ) AS y
    WHERE upto - lines < %(rank_cap)s
),
line_docs AS (
    SELECT 'line' AS kind, l.scope, l.agent_id, l.ordinal::bigint AS ord, l.lexemes
    FROM archival_lines AS l
    WHERE (SELECT lines FROM scanned) AND
    l.tenant_id = %(tenant_id)s
      AND ((l.user_id = %(user_id)s
            AND ((l.scope = 'user' AND l.agent_id = '')
                 OR (l.scope = 'agent' AND l.agent_id = %(agent_id)s)))
           OR (l.user_id = '' AND l.scope = 'workspace'
               AND l.agent_id = %(block_workspace_id)s))
      AND ts_match_vq(l.lexemes, (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery
                                  FROM (SELECT DISTINCT lexeme FROM lexicon) AS x))
    UNION ALL
    SELECT 'line', l.scope, l.agent_id, l.ordinal::bigint, l.lexemes
    FROM (
        SELECT p.scope, p.agent_id, p.ord, min(p.rarity) AS rarity
        FROM (
            SELECT b.scope, b.agent_id, o.ord, c.rarity
            FROM chosen AS c
            CROSS JOIN searched_blocks AS b
            JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = c.lexeme
            CROSS JOIN LATERAL unnest(s.ordinals[1:%(rank_cap)s]) AS o(ord)
            WHERE NOT (SELECT lines FROM scanned)
        ) AS p
        GROUP BY p.scope, p.agent_id, p.ord
        ORDER BY rarity, p.ord
        LIMIT %(rank_cap)s
    ) AS x
    JOIN archival_lines AS l ON l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN x.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND l.scope = x.scope AND l.agent_id = x.agent_id AND l.ordinal = x.ord
),
docs AS (
    SELECT kind, scope, agent_id, ord, lexemes FROM line_docs
    UNION ALL
    SELECT kind, scope, agent_id, ord, lexemes FROM memory_docs
),
hits AS (
    SELECT d.kind, d.scope, d.agent_id, d.ord, x.term, x.weight,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf,
           length(d.lexemes)::float8 AS dl
    FROM docs AS d
    CROSS JOIN LATERAL unnest(d.lexemes) AS u
    JOIN lexicon AS x ON x.lexeme = u.lexeme COLLATE "C"
),
scored AS (
    SELECT h.kind, h.scope, h.agent_id, h.ord,
           sum(i.idf * h.weight * h.tf * (1.2 + 1)
               / (h.tf + 1.2 * (1 - 0.4 + 0.4 * h.dl / s.avgdl))) AS own
    FROM hits AS h JOIN idf AS i USING (term) CROSS JOIN stats AS s
    GROUP BY h.kind, h.scope, h.agent_id, h.ord
),
context AS (
    SELECT sc.kind, sc.scope, sc.agent_id, sc.ord + v.step AS ord, max(sc.own * v.share) AS near
    FROM scored AS sc
    JOIN searched_blocks AS k
      ON sc.kind = 'line' AND k.scope = sc.scope AND k.agent_id = sc.agent_id
     AND cardinality(k.speakers) >= 2
    CROSS JOIN (VALUES (-2, 0.5), (-1, 1.0), (1, 1.0), (2, 0.5)) AS v(step, share)
    GROUP BY sc.kind, sc.scope, sc.agent_id, sc.ord + v.step
),
combined AS (
    SELECT coalesce(sc.kind, cx.kind) AS kind, coalesce(sc.scope, cx.scope) AS scope,
           coalesce(sc.agent_id, cx.agent_id) AS agent_id, coalesce(sc.ord, cx.ord) AS ord,
           coalesce(sc.own, 0) + 0.5 * coalesce(cx.near, 0) AS points,
           coalesce(sc.own, 0) AS own
    FROM scored AS sc
    FULL JOIN context AS cx
      ON (cx.kind, cx.scope, cx.agent_id, cx.ord) = (sc.kind, sc.scope, sc.agent_id, sc.ord)
),
ranked AS (
    SELECT c.kind, c.scope, c.agent_id, coalesce(m.workspace_id, '') AS workspace_id, c.ord,
           m.memory_id, c.points / nullif(b.top, 0) AS raw, c.own / nullif(b.top, 0) AS own
    FROM combined AS c
    CROSS JOIN best AS b
    LEFT JOIN searched_blocks AS k
      ON c.kind = 'line' AND k.scope = c.scope AND k.agent_id = c.agent_id
    LEFT JOIN memory_docs AS m
      ON c.kind = 'memory' AND m.ord = c.ord
    WHERE (c.kind = 'line' AND c.ord BETWEEN 1 AND k.line_count) OR m.memory_id IS NOT NULL
),
best_first AS (
    SELECT kind, scope, agent_id, workspace_id, ord, memory_id,
           least(1.0, raw) AS score, raw
    FROM ranked
    WHERE raw > 0 AND least(1.0, raw) >= %(rank_min_score)s
      AND least(1.0, own) >= %(rank_min_own_words)s
    ORDER BY raw DESC, kind, scope, agent_id, ord
    LIMIT %(rank_limit)s
),
found AS (
    SELECT b.kind, b.scope, b.agent_id, b.workspace_id,
           coalesce(l.line_number, 0) AS line_number, b.memory_id,
           coalesce(l.content, CASE
    WHEN m.source = 'manual' AND m.key !~ '^memorize:[0-9a-f]{40}$'
    THEN m.key || ': ' || m.value ELSE m.value END) AS content, b.score, b.raw, b.ord
    FROM best_first AS b
    LEFT JOIN archival_lines AS l
      ON b.kind = 'line' AND l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
     AND l.scope = b.scope AND l.agent_id = b.agent_id AND l.ordinal = b.ord
    LEFT JOIN memories AS m
      ON b.kind = 'memory' AND m.tenant_id = %(tenant_id)s AND m.id = b.memory_id
)
SELECT (SELECT memories FROM scanned) AS memories_scanned,
       (SELECT lines FROM scanned) AS lines_scanned,
       (SELECT lines FROM sizes)::bigint AS line_count,
       (SELECT memories FROM sizes)::bigint AS memory_count,
    CASE WHEN NOT (SELECT memories FROM scanned) THEN
        (SELECT string_agg(DISTINCT quote_literal(lexeme), ' | ') FROM lexicon)
    END AS memory_query,
    (SELECT coalesce(json_agg(f ORDER BY f.raw DESC, f.kind, f.scope, f.agent_id, f.ord), '[]')
     FROM found AS f) AS matches

-- recall.RECALL_FUSE
WITH lexical AS (
    SELECT x.scope,
      x.agent_id,
      x.ord,
      coalesce(x.memory_id, '00000000-0000-0000-0000-000000000000'::uuid) AS memory_id,
      x.score,
      x.own
    FROM unnest(%(rank_scopes)s::text[], %(rank_agent_ids)s::text[], %(rank_ordinals)s::bigint[],
                %(rank_memory_ids)s::uuid[], %(rank_scores)s::float8[], %(rank_owns)s::float8[])
         AS x(scope, agent_id, ord, memory_id, score, own)
),
near_lines AS (
    SELECT l.scope,
      l.agent_id,
      l.ordinal::bigint AS ord,
      '00000000-0000-0000-0000-000000000000'::uuid AS memory_id
    FROM archival_lines AS l
    WHERE %(rank_lines_read)s AND
    l.tenant_id = %(tenant_id)s
      AND ((l.user_id = %(user_id)s
            AND ((l.scope = 'user' AND l.agent_id = '')
                 OR (l.scope = 'agent' AND l.agent_id = %(agent_id)s)))
           OR (l.user_id = '' AND l.scope = 'workspace'
               AND l.agent_id = %(block_workspace_id)s))
      AND l.embedding_model = %(rank_model)s AND l.embedded_hash = hashtextextended(l.content,
        0) AND l.embedding IS NOT NULL
    ORDER BY l.embedding::halfvec <=> %(rank_vector)s::halfvec
    LIMIT 100
),
near_memories AS (
    SELECT m.scope, CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           0::bigint AS ord, m.id AS memory_id
    FROM memories AS m
    WHERE %(rank_memories_read)s AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
      AND m.embedding_model = %(rank_model)s AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value,
        0) AND m.embedding IS NOT NULL
    ORDER BY m.embedding::halfvec <=> %(rank_vector)s::halfvec
    LIMIT 100
),
near_given AS (
    SELECT x.scope,
      x.agent_id,
      x.ord,
      coalesce(x.memory_id, '00000000-0000-0000-0000-000000000000'::uuid) AS memory_id
    FROM unnest(%(rank_near_scopes)s::text[], %(rank_near_agent_ids)s::text[],
                %(rank_near_ordinals)s::bigint[], %(rank_near_memory_ids)s::uuid[])
         AS x(scope, agent_id, ord, memory_id)
),
conversations AS (
    SELECT v.scope, v.agent_id
    FROM archival_vocabulary AS v
    WHERE
    v.tenant_id = %(tenant_id)s
      AND ((v.user_id = %(user_id)s
            AND ((v.scope = 'user' AND v.agent_id = '')
                 OR (v.scope = 'agent' AND v.agent_id = %(agent_id)s)))
           OR (v.user_id = '' AND v.scope = 'workspace'
               AND v.agent_id = %(block_workspace_id)s))
      AND cardinality(v.speakers) >= 2
),
candidates AS (
    SELECT scope, agent_id, ord, memory_id, max(score) AS lexical, max(own) AS own
    FROM (
        SELECT scope, agent_id, ord, memory_id, score, own FROM lexical
        UNION ALL SELECT scope, agent_id, ord, memory_id, NULL, NULL FROM near_lines
        UNION ALL SELECT scope, agent_id, ord, memory_id, NULL, NULL FROM near_memories
        UNION ALL SELECT scope, agent_id, ord, memory_id, NULL, NULL FROM near_given
    ) AS x
    GROUP BY scope, agent_id, ord, memory_id
),
line_cosines AS (
    SELECT * FROM (
        SELECT l.scope, l.agent_id, l.ordinal::bigint AS ord, w.talk,
               (1 - (l.embedding::halfvec <=> %(rank_vector)s::halfvec))::float8 AS cosine
        FROM (SELECT DISTINCT c.scope, c.agent_id, c.ord + s.step AS ord,
                     t.scope IS NOT NULL AS talk
              FROM candidates AS c
              CROSS JOIN (VALUES (-1), (0), (1)) AS s(step)
              LEFT JOIN conversations AS t ON t.scope = c.scope AND t.agent_id = c.agent_id
              WHERE c.memory_id = '00000000-0000-0000-0000-000000000000'::uuid AND (s.step = 0 OR t.scope IS NOT NULL)) AS w
        JOIN archival_lines AS l ON l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN w.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND l.scope = w.scope AND l.agent_id = w.agent_id AND l.ordinal = w.ord
        WHERE l.embedding_model = %(rank_model)s AND l.embedded_hash = hashtextextended(l.content,
          0) AND l.embedding IS NOT NULL
    ) AS x
    WHERE cosine <> 'NaN'::float8
),
line_meaning AS (
    SELECT scope, agent_id, ord, '00000000-0000-0000-0000-000000000000'::uuid AS memory_id, cosine,
           cosine + 0.5
               * coalesce(CASE WHEN talk THEN greatest(before, after) END, cosine) AS meaning
    FROM (
        SELECT scope, agent_id, ord, talk, cosine,
               CASE WHEN lag(ord) OVER w = ord - 1 THEN lag(cosine) OVER w END AS before,
               CASE WHEN lead(ord) OVER w = ord + 1 THEN lead(cosine) OVER w END AS after
        FROM line_cosines
        WINDOW w AS (PARTITION BY scope, agent_id ORDER BY ord)
    ) AS x
),
memory_meaning AS (
    SELECT c.scope, c.agent_id, c.ord, c.memory_id,
           (1 - (m.embedding::halfvec <=> %(rank_vector)s::halfvec))::float8 AS cosine
    FROM candidates AS c
    JOIN memories AS m ON m.tenant_id = %(tenant_id)s AND m.id = c.memory_id
    WHERE c.memory_id <> '00000000-0000-0000-0000-000000000000'::uuid AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
      AND m.embedding_model = %(rank_model)s AND m.embedded_hash = hashtextextended(m.key || E'\n' || m.value,
        0) AND m.embedding IS NOT NULL
),
-- Each candidate with its words' score, its meaning and its own cosine: one grouping of
-- the rows of both (a hash or a sort, whatever the planner guessed of their numbers).
scored AS (
    SELECT scope, agent_id, ord, memory_id, coalesce(max(lexical), 0) AS lexical,
           coalesce(max(own), 0) AS own, max(meaning) AS meaning, max(cosine) AS cosine
    FROM (
        SELECT scope, agent_id, ord, memory_id, lexical, own, NULL::float8 AS meaning,
               NULL::float8 AS cosine, true AS candidate
        FROM candidates
        UNION ALL
        SELECT scope, agent_id, ord, memory_id, NULL, NULL, meaning, cosine, false
        FROM line_meaning
        UNION ALL
        SELECT scope, agent_id, ord, memory_id, NULL, NULL, (1 + 0.5) * cosine,
               cosine, false
        FROM memory_meaning
        WHERE cosine <> 'NaN'::float8
    ) AS x
    GROUP BY scope, agent_id, ord, memory_id
    HAVING bool_or(candidate)
),
spread AS (
    SELECT min(meaning) AS low, max(meaning) AS high FROM scored
),
-- The score (points), and what a candidate earns by itself on a scale of its own
-- (alone; NULL where it is its own words' score: no vector, or no scale of the model).
fused AS (
    SELECT s.*,
           CASE WHEN s.meaning IS NULL THEN s.lexical
                ELSE (1 - %(rank_weight)s) * s.lexical + %(rank_weight)s
                     * coalesce((s.meaning - p.low) / nullif(p.high - p.low, 0), 1)
           END AS points,
           CASE WHEN %(rank_scaled)s AND s.cosine IS NOT NULL
                THEN (1 - %(rank_weight)s) * s.own + %(rank_weight)s
                     * least(1.0, greatest(0.0, (s.cosine - %(rank_unrelated)s)
                                                / (%(rank_answering)s - %(rank_unrelated)s)))
           END AS alone
    FROM scored AS s CROSS JOIN spread AS p
),
texts AS (
    SELECT CASE WHEN f.memory_id = '00000000-0000-0000-0000-000000000000'::uuid THEN 'line' ELSE 'memory' END AS kind,
           f.scope, f.agent_id,
           CASE WHEN f.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           f.ord, nullif(f.memory_id, '00000000-0000-0000-0000-000000000000'::uuid) AS memory_id,
           coalesce(l.line_number, 0) AS line_number,
           coalesce(l.content, CASE
    WHEN m.source = 'manual' AND m.key !~ '^memorize:[0-9a-f]{40}$'
    THEN m.key || ': ' || m.value ELSE m.value END) AS content,
           f.own, f.alone,
           f.points * CASE WHEN %(rank_speaker)s <> ''
                            AND substring(l.content FROM %(speaker_pattern)s) = %(rank_speaker)s
                           THEN 1.5 ELSE 1 END AS raw
    FROM fused AS f
    LEFT JOIN archival_lines AS l
      ON f.memory_id = '00000000-0000-0000-0000-000000000000'::uuid AND l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN f.scope = 'workspace' THEN '' ELSE %(user_id)s END
     AND l.scope = f.scope AND l.agent_id = f.agent_id AND l.ordinal = f.ord
    LEFT JOIN memories AS m
      ON f.memory_id <> '00000000-0000-0000-0000-000000000000'::uuid AND m.tenant_id = %(tenant_id)s AND m.id = f.memory_id
     AND NOT m.held_for_review
    WHERE l.content IS NOT NULL OR m.id IS NOT NULL
),
-- The best match's points, against what it earns by itself on the model's scale (NULL
-- where it has no vector, or the model no scale): the meaning half of the points is
-- spread over the candidates, so the best always has all of it, however far it is.
best AS (
    SELECT raw, alone FROM texts WHERE raw > 0 ORDER BY raw DESC, kind, scope, agent_id, ord
    LIMIT 1
),
-- Scores are the points brought down, all in one ratio (the order stays), until the
-- best match's is what it earns by itself: a query nothing answers scores low.
scaled AS (
    SELECT t.*, least(1.0, t.raw * coalesce(
               (SELECT least(1.0, b.alone / b.raw) FROM best AS b WHERE b.alone IS NOT NULL),
               1.0)) AS score
    FROM texts AS t
),
found AS (
    SELECT kind, scope, agent_id, workspace_id, line_number, memory_id, content,
           score, raw, ord
    FROM scaled
    WHERE raw > 0 AND score >= %(rank_min_score)s
      AND CASE WHEN alone IS NULL THEN own >= %(rank_min_own_words)s
               ELSE alone >= %(rank_min_own)s END
    ORDER BY raw DESC, kind, scope, agent_id, ord, memory_id
    LIMIT %(rank_limit)s
),
used AS (
    UPDATE memories AS used
    SET last_used_time = clock_timestamp(), expire_time = expiry_after_use(used)
    WHERE used.tenant_id = %(tenant_id)s AND used.id = ANY(ARRAY(
        SELECT x.id FROM memories AS x
        WHERE x.tenant_id = %(tenant_id)s AND x.id = ANY(ARRAY(
          SELECT memory_id
          FROM found
          WHERE memory_id IS NOT NULL))
          AND coalesce(last_used_time, '-infinity') < clock_timestamp() - interval '60s'
        FOR UPDATE SKIP LOCKED)))
SELECT * FROM found ORDER BY raw DESC, kind, scope, agent_id, ord, memory_id

-- recall.RECALL_RANK
WITH
terms AS (
    SELECT DISTINCT u.lexeme COLLATE "C" AS term
    FROM unnest(to_tsvector('english', %(rank_query)s)) AS u
),
searched_blocks AS (
    SELECT b.scope, b.agent_id, b.line_count, b.lexeme_total, b.speakers
    FROM archival_vocabulary AS b
    WHERE
    b.tenant_id = %(tenant_id)s
      AND ((b.user_id = %(user_id)s
            AND ((b.scope = 'user' AND b.agent_id = '')
                 OR (b.scope = 'agent' AND b.agent_id = %(agent_id)s)))
           OR (b.user_id = '' AND b.scope = 'workspace'
               AND b.agent_id = %(block_workspace_id)s))
),
sizes AS (
    SELECT coalesce((SELECT sum(line_count) FROM searched_blocks), 0)::float8 AS lines,
           coalesce((SELECT sum(lexeme_total) FROM searched_blocks), 0)::float8 AS lexemes,
           (SELECT count(*) FROM (
                SELECT
                  FROM memories AS m
                  WHERE %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
                LIMIT %(rank_memory_bound)s) AS c)::float8 AS memories
),
scanned AS (
    SELECT lines <= %(rank_scan)s AS lines, memories <= %(rank_scan)s AS memories FROM sizes
),
memory_docs AS (
    SELECT 'memory' AS kind, m.scope,
           CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           CASE WHEN m.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           m.id AS memory_id,
             to_tsvector('english'::regconfig, (m.key::text || ' ') || m.value) AS lexemes,
             row_number() OVER (
             ORDER BY m.id) AS ord
    FROM memories AS m
    WHERE (
      SELECT memories
      FROM scanned) AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
),
term_lines AS (
    SELECT t.term, sum(s.lines) AS lines
    FROM terms AS t CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = t.term
    GROUP BY t.term
),
memory_lexemes AS (
    SELECT u.lexeme COLLATE "C" AS lexeme, count(*) AS docs
    FROM memory_docs AS d, unnest(d.lexemes) AS u
    GROUP BY 1
),
missing AS (
    SELECT t.term FROM terms AS t
    WHERE length(t.term) >= 4
      AND t.term NOT IN (SELECT term FROM term_lines)
      AND t.term NOT IN (SELECT lexeme FROM memory_lexemes)
    ORDER BY length(t.term) DESC, t.term
    LIMIT 32
),
close AS (
    SELECT m.term, s.lexeme, sum(s.lines) AS lines
    FROM missing AS m CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s
      ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id
     AND s.lexeme >= left(m.term, 2)
     AND s.lexeme < left(m.term, 2) || chr(1114111)
    WHERE similarity(s.lexeme, m.term) >= 0.4
    GROUP BY m.term, s.lexeme
    UNION ALL
    SELECT m.term, x.lexeme, 0
    FROM missing AS m, memory_lexemes AS x
    WHERE starts_with(x.lexeme, left(m.term, 2))
      AND similarity(x.lexeme, m.term) >= 0.4
),
lexicon AS (
    SELECT t.term, t.term AS lexeme, 1.0::float8 AS weight, coalesce(x.lines, 0)::float8 AS lines
    FROM terms AS t LEFT JOIN term_lines AS x USING (term)
    UNION ALL
    SELECT term, lexeme, similarity(lexeme, term)::float8, sum(lines)::float8
    FROM close GROUP BY term, lexeme
),
df AS (
    SELECT x.term, sum(x.lines + coalesce(m.docs, 0)) AS df
    FROM lexicon AS x LEFT JOIN memory_lexemes AS m USING (lexeme)
    GROUP BY x.term
),
stats AS (
    SELECT s.lines + s.memories AS n,
           greatest(CASE WHEN s.lines > 0 THEN s.lexemes / s.lines
                         ELSE (SELECT avg(length(lexemes)) FROM memory_docs) END, 1)::float8
               AS avgdl
    FROM sizes AS s
),
idf AS (
    SELECT t.term, ln(1 + (s.n - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS idf
    FROM terms AS t LEFT JOIN df USING (term) CROSS JOIN stats AS s
),
best AS (
    SELECT sum(idf) AS top FROM idf
),
chosen AS (
    SELECT lexeme, row_number() OVER (ORDER BY lines, lexeme) AS rarity FROM (
        SELECT lexeme, lines, sum(lines) OVER (ORDER BY lines, lexeme) AS upto
        FROM (SELECT lexeme, max(lines) AS lines FROM lexicon GROUP BY lexeme) AS x
    ) AS y
    WHERE upto - lines < %(rank_cap)s
),
line_docs AS (
    SELECT 'line' AS kind, l.scope, l.agent_id, l.ordinal::bigint AS ord, l.lexemes
    FROM archival_lines AS l
    WHERE (SELECT lines FROM scanned) AND
    l.tenant_id = %(tenant_id)s
      AND ((l.user_id = %(user_id)s
            AND ((l.scope = 'user' AND l.agent_id = '')
                 OR (l.scope = 'agent' AND l.agent_id = %(agent_id)s)))
           OR (l.user_id = '' AND l.scope = 'workspace'
               AND l.agent_id = %(block_workspace_id)s))
      AND ts_match_vq(l.lexemes, (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery
                                  FROM (SELECT DISTINCT lexeme FROM lexicon) AS x))
    UNION ALL
    SELECT 'line', l.scope, l.agent_id, l.ordinal::bigint, l.lexemes
    FROM (
        SELECT p.scope, p.agent_id, p.ord, min(p.rarity) AS rarity
        FROM (
            SELECT b.scope, b.agent_id, o.ord, c.rarity
            FROM chosen AS c
            CROSS JOIN searched_blocks AS b
            JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = c.lexeme
            CROSS JOIN LATERAL unnest(s.ordinals[1:%(rank_cap)s]) AS o(ord)
            WHERE NOT (SELECT lines FROM scanned)
        ) AS p
        GROUP BY p.scope, p.agent_id, p.ord
        ORDER BY rarity, p.ord
        LIMIT %(rank_cap)s
    ) AS x
    JOIN archival_lines AS l ON l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN x.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND l.scope = x.scope AND l.agent_id = x.agent_id AND l.ordinal = x.ord
),
docs AS (
    SELECT kind, scope, agent_id, ord, lexemes FROM line_docs
    UNION ALL
    SELECT kind, scope, agent_id, ord, lexemes FROM memory_docs
),
hits AS (
    SELECT d.kind, d.scope, d.agent_id, d.ord, x.term, x.weight,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf,
           length(d.lexemes)::float8 AS dl
    FROM docs AS d
    CROSS JOIN LATERAL unnest(d.lexemes) AS u
    JOIN lexicon AS x ON x.lexeme = u.lexeme COLLATE "C"
),
scored AS (
    SELECT h.kind, h.scope, h.agent_id, h.ord,
           sum(i.idf * h.weight * h.tf * (1.2 + 1)
               / (h.tf + 1.2 * (1 - 0.4 + 0.4 * h.dl / s.avgdl))) AS own
    FROM hits AS h JOIN idf AS i USING (term) CROSS JOIN stats AS s
    GROUP BY h.kind, h.scope, h.agent_id, h.ord
),
context AS (
    SELECT sc.kind, sc.scope, sc.agent_id, sc.ord + v.step AS ord, max(sc.own * v.share) AS near
    FROM scored AS sc
    JOIN searched_blocks AS k
      ON sc.kind = 'line' AND k.scope = sc.scope AND k.agent_id = sc.agent_id
     AND cardinality(k.speakers) >= 2
    CROSS JOIN (VALUES (-2, 0.5), (-1, 1.0), (1, 1.0), (2, 0.5)) AS v(step, share)
    GROUP BY sc.kind, sc.scope, sc.agent_id, sc.ord + v.step
),
combined AS (
    SELECT coalesce(sc.kind, cx.kind) AS kind, coalesce(sc.scope, cx.scope) AS scope,
           coalesce(sc.agent_id, cx.agent_id) AS agent_id, coalesce(sc.ord, cx.ord) AS ord,
           coalesce(sc.own, 0) + 0.5 * coalesce(cx.near, 0) AS points,
           coalesce(sc.own, 0) AS own
    FROM scored AS sc
    FULL JOIN context AS cx
      ON (cx.kind, cx.scope, cx.agent_id, cx.ord) = (sc.kind, sc.scope, sc.agent_id, sc.ord)
),
ranked AS (
    SELECT c.kind, c.scope, c.agent_id, coalesce(m.workspace_id, '') AS workspace_id, c.ord,
           m.memory_id, c.points / nullif(b.top, 0) AS raw, c.own / nullif(b.top, 0) AS own
    FROM combined AS c
    CROSS JOIN best AS b
    LEFT JOIN searched_blocks AS k
      ON c.kind = 'line' AND k.scope = c.scope AND k.agent_id = c.agent_id
    LEFT JOIN memory_docs AS m
      ON c.kind = 'memory' AND m.ord = c.ord
    WHERE (c.kind = 'line' AND c.ord BETWEEN 1 AND k.line_count) OR m.memory_id IS NOT NULL
),
best_first AS (
    SELECT kind, scope, agent_id, workspace_id, ord, memory_id,
           least(1.0, raw) AS score, raw
    FROM ranked
    WHERE raw > 0 AND least(1.0, raw) >= %(rank_min_score)s
      AND least(1.0, own) >= %(rank_min_own_words)s
    ORDER BY raw DESC, kind, scope, agent_id, ord
    LIMIT %(rank_limit)s
),
found AS (
    SELECT b.kind, b.scope, b.agent_id, b.workspace_id,
           coalesce(l.line_number, 0) AS line_number, b.memory_id,
           coalesce(l.content, CASE
    WHEN m.source = 'manual' AND m.key !~ '^memorize:[0-9a-f]{40}$'
    THEN m.key || ': ' || m.value ELSE m.value END) AS content, b.score, b.raw, b.ord
    FROM best_first AS b
    LEFT JOIN archival_lines AS l
      ON b.kind = 'line' AND l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
     AND l.scope = b.scope AND l.agent_id = b.agent_id AND l.ordinal = b.ord
    LEFT JOIN memories AS m
      ON b.kind = 'memory' AND m.tenant_id = %(tenant_id)s AND m.id = b.memory_id
),
used AS (
    UPDATE memories AS used
    SET last_used_time = clock_timestamp(), expire_time = expiry_after_use(used)
    WHERE used.tenant_id = %(tenant_id)s AND used.id = ANY(ARRAY(
        SELECT x.id FROM memories AS x
        WHERE x.tenant_id = %(tenant_id)s AND x.id = ANY(ARRAY(
          SELECT memory_id
          FROM found
          WHERE memory_id IS NOT NULL))
          AND coalesce(last_used_time, '-infinity') < clock_timestamp() - interval '60s'
        FOR UPDATE SKIP LOCKED)))
SELECT (SELECT memories FROM scanned) AS memories_scanned,
       (SELECT lines FROM scanned) AS lines_scanned,
       (SELECT lines FROM sizes)::bigint AS line_count,
       (SELECT memories FROM sizes)::bigint AS memory_count,
    CASE WHEN NOT (SELECT memories FROM scanned) THEN
        (SELECT string_agg(DISTINCT quote_literal(lexeme), ' | ') FROM lexicon)
    END AS memory_query,
    (SELECT coalesce(json_agg(f ORDER BY f.raw DESC, f.kind, f.scope, f.agent_id, f.ord), '[]')
     FROM found AS f) AS matches

-- recall.RECALL_RANK_GIVEN
WITH
terms AS (
    SELECT DISTINCT u.lexeme COLLATE "C" AS term
    FROM unnest(to_tsvector('english', %(rank_query)s)) AS u
),
searched_blocks AS (
    SELECT b.scope, b.agent_id, b.line_count, b.lexeme_total, b.speakers
    FROM archival_vocabulary AS b
    WHERE
    b.tenant_id = %(tenant_id)s
      AND ((b.user_id = %(user_id)s
            AND ((b.scope = 'user' AND b.agent_id = '')
                 OR (b.scope = 'agent' AND b.agent_id = %(agent_id)s)))
           OR (b.user_id = '' AND b.scope = 'workspace'
               AND b.agent_id = %(block_workspace_id)s))
),
sizes AS (
    SELECT coalesce((SELECT sum(line_count) FROM searched_blocks), 0)::float8 AS lines,
           coalesce((SELECT sum(lexeme_total) FROM searched_blocks), 0)::float8 AS lexemes,
           (SELECT count(*) FROM (
                SELECT
                  FROM memories AS m
                  WHERE %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
                LIMIT %(rank_memory_bound)s) AS c)::float8 AS memories
),
scanned AS (
    SELECT lines <= %(rank_scan)s AS lines, memories <= %(rank_scan)s AS memories FROM sizes
),
memory_docs AS (
    SELECT 'memory' AS kind, m.scope,
           CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           CASE WHEN m.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           m.id AS memory_id,
             to_tsvector('english'::regconfig, (m.key::text || ' ') || m.value) AS lexemes,
             row_number() OVER (
             ORDER BY m.id) AS ord
    FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = ANY (%(rank_memory_ids)b::uuid[])
      AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
),
term_lines AS (
    SELECT t.term, sum(s.lines) AS lines
    FROM terms AS t CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = t.term
    GROUP BY t.term
),
memory_lexemes AS (
    SELECT u.lexeme COLLATE "C" AS lexeme, count(*) AS docs
    FROM memory_docs AS d, unnest(d.lexemes) AS u
    GROUP BY 1
),
missing AS (
    SELECT t.term FROM terms AS t
    WHERE length(t.term) >= 4
      AND t.term NOT IN (SELECT term FROM term_lines)
      AND t.term NOT IN (SELECT lexeme FROM memory_lexemes)
    ORDER BY length(t.term) DESC, t.term
    LIMIT 32
),
close AS (
    SELECT m.term, s.lexeme, sum(s.lines) AS lines
    FROM missing AS m CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s
      ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id
     AND s.lexeme >= left(m.term, 2)
     AND s.lexeme < left(m.term, 2) || chr(1114111)
    WHERE similarity(s.lexeme, m.term) >= 0.4
    GROUP BY m.term, s.lexeme
    UNION ALL
    SELECT m.term, x.lexeme, 0
    FROM missing AS m, memory_lexemes AS x
    WHERE starts_with(x.lexeme, left(m.term, 2))
      AND similarity(x.lexeme, m.term) >= 0.4
),
lexicon AS (
    SELECT t.term, t.term AS lexeme, 1.0::float8 AS weight, coalesce(x.lines, 0)::float8 AS lines
    FROM terms AS t LEFT JOIN term_lines AS x USING (term)
    UNION ALL
    SELECT term, lexeme, similarity(lexeme, term)::float8, sum(lines)::float8
    FROM close GROUP BY term, lexeme
),
df AS (
    SELECT x.term, sum(x.lines + coalesce(m.docs, 0)) AS df
    FROM lexicon AS x LEFT JOIN memory_lexemes AS m USING (lexeme)
    GROUP BY x.term
),
stats AS (
    SELECT s.lines + s.memories AS n,
           greatest(CASE WHEN s.lines > 0 THEN s.lexemes / s.lines
                         ELSE (SELECT avg(length(lexemes)) FROM memory_docs) END, 1)::float8
               AS avgdl
    FROM sizes AS s
),
idf AS (
    SELECT t.term, ln(1 + (s.n - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS idf
    FROM terms AS t LEFT JOIN df USING (term) CROSS JOIN stats AS s
),
best AS (
    SELECT sum(idf) AS top FROM idf
),
chosen AS (
    SELECT lexeme, row_number() OVER (ORDER BY lines, lexeme) AS rarity FROM (
        SELECT lexeme, lines, sum(lines) OVER (ORDER BY lines, lexeme) AS upto
        FROM (SELECT lexeme, max(lines) AS lines FROM lexicon GROUP BY lexeme) AS x
    ) AS y
    WHERE upto - lines < %(rank_cap)s
),
line_docs AS (
    SELECT 'line' AS kind, l.scope, l.agent_id, l.ordinal::bigint AS ord, l.lexemes
    FROM archival_lines AS l
    WHERE (SELECT lines FROM scanned) AND
    l.tenant_id = %(tenant_id)s
      AND ((l.user_id = %(user_id)s
            AND ((l.scope = 'user' AND l.agent_id = '')
                 OR (l.scope = 'agent' AND l.agent_id = %(agent_id)s)))
           OR (l.user_id = '' AND l.scope = 'workspace'
               AND l.agent_id = %(block_workspace_id)s))
      AND ts_match_vq(l.lexemes, (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery
                                  FROM (SELECT DISTINCT lexeme FROM lexicon) AS x))
    UNION ALL
    SELECT 'line', l.scope, l.agent_id, l.ordinal::bigint, l.lexemes
    FROM (
        SELECT p.scope, p.agent_id, p.ord, min(p.rarity) AS rarity
        FROM (
            SELECT b.scope, b.agent_id, o.ord, c.rarity
            FROM chosen AS c
            CROSS JOIN searched_blocks AS b
            JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = c.lexeme
            CROSS JOIN LATERAL unnest(s.ordinals[1:%(rank_cap)s]) AS o(ord)
            WHERE NOT (SELECT lines FROM scanned)
        ) AS p
        GROUP BY p.scope, p.agent_id, p.ord
        ORDER BY rarity, p.ord
        LIMIT %(rank_cap)s
    ) AS x
    JOIN archival_lines AS l ON l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN x.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND l.scope = x.scope AND l.agent_id = x.agent_id AND l.ordinal = x.ord
),
docs AS (
    SELECT kind, scope, agent_id, ord, lexemes FROM line_docs
    UNION ALL
    SELECT kind, scope, agent_id, ord, lexemes FROM memory_docs
),
hits AS (
    SELECT d.kind, d.scope, d.agent_id, d.ord, x.term, x.weight,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf,
           length(d.lexemes)::float8 AS dl
    FROM docs AS d
    CROSS JOIN LATERAL unnest(d.lexemes) AS u
    JOIN lexicon AS x ON x.lexeme = u.lexeme COLLATE "C"
),
scored AS (
    SELECT h.kind, h.scope, h.agent_id, h.ord,
           sum(i.idf * h.weight * h.tf * (1.2 + 1)
               / (h.tf + 1.2 * (1 - 0.4 + 0.4 * h.dl / s.avgdl))) AS own
    FROM hits AS h JOIN idf AS i USING (term) CROSS JOIN stats AS s
    GROUP BY h.kind, h.scope, h.agent_id, h.ord
),
context AS (
    SELECT sc.kind, sc.scope, sc.agent_id, sc.ord + v.step AS ord, max(sc.own * v.share) AS near
    FROM scored AS sc
    JOIN searched_blocks AS k
      ON sc.kind = 'line' AND k.scope = sc.scope AND k.agent_id = sc.agent_id
     AND cardinality(k.speakers) >= 2
    CROSS JOIN (VALUES (-2, 0.5), (-1, 1.0), (1, 1.0), (2, 0.5)) AS v(step, share)
    GROUP BY sc.kind, sc.scope, sc.agent_id, sc.ord + v.step
),
combined AS (
    SELECT coalesce(sc.kind, cx.kind) AS kind, coalesce(sc.scope, cx.scope) AS scope,
           coalesce(sc.agent_id, cx.agent_id) AS agent_id, coalesce(sc.ord, cx.ord) AS ord,
           coalesce(sc.own, 0) + 0.5 * coalesce(cx.near, 0) AS points,
           coalesce(sc.own, 0) AS own
    FROM scored AS sc
    FULL JOIN context AS cx
      ON (cx.kind, cx.scope, cx.agent_id, cx.ord) = (sc.kind, sc.scope, sc.agent_id, sc.ord)
),
ranked AS (
    SELECT c.kind, c.scope, c.agent_id, coalesce(m.workspace_id, '') AS workspace_id, c.ord,
           m.memory_id, c.points / nullif(b.top, 0) AS raw, c.own / nullif(b.top, 0) AS own
    FROM combined AS c
    CROSS JOIN best AS b
    LEFT JOIN searched_blocks AS k
      ON c.kind = 'line' AND k.scope = c.scope AND k.agent_id = c.agent_id
    LEFT JOIN memory_docs AS m
      ON c.kind = 'memory' AND m.ord = c.ord
    WHERE (c.kind = 'line' AND c.ord BETWEEN 1 AND k.line_count) OR m.memory_id IS NOT NULL
),
best_first AS (
    SELECT kind, scope, agent_id, workspace_id, ord, memory_id,
           least(1.0, raw) AS score, raw
    FROM ranked
    WHERE raw > 0 AND least(1.0, raw) >= %(rank_min_score)s
      AND least(1.0, own) >= %(rank_min_own_words)s
    ORDER BY raw DESC, kind, scope, agent_id, ord
    LIMIT %(rank_limit)s
),
found AS (
    SELECT b.kind, b.scope, b.agent_id, b.workspace_id,
           coalesce(l.line_number, 0) AS line_number, b.memory_id,
           coalesce(l.content, CASE
    WHEN m.source = 'manual' AND m.key !~ '^memorize:[0-9a-f]{40}$'
    THEN m.key || ': ' || m.value ELSE m.value END) AS content, b.score, b.raw, b.ord
    FROM best_first AS b
    LEFT JOIN archival_lines AS l
      ON b.kind = 'line' AND l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
     AND l.scope = b.scope AND l.agent_id = b.agent_id AND l.ordinal = b.ord
    LEFT JOIN memories AS m
      ON b.kind = 'memory' AND m.tenant_id = %(tenant_id)s AND m.id = b.memory_id
),
used AS (
    UPDATE memories AS used
    SET last_used_time = clock_timestamp(), expire_time = expiry_after_use(used)
    WHERE used.tenant_id = %(tenant_id)s AND used.id = ANY(ARRAY(
        SELECT x.id FROM memories AS x
        WHERE x.tenant_id = %(tenant_id)s AND x.id = ANY(ARRAY(
          SELECT memory_id
          FROM found
          WHERE memory_id IS NOT NULL))
          AND coalesce(last_used_time, '-infinity') < clock_timestamp() - interval '60s'
        FOR UPDATE SKIP LOCKED)))
SELECT (SELECT memories FROM scanned) AS memories_scanned,
       (SELECT lines FROM scanned) AS lines_scanned,
       (SELECT lines FROM sizes)::bigint AS line_count,
       (SELECT memories FROM sizes)::bigint AS memory_count,
    CASE WHEN NOT (SELECT memories FROM scanned) THEN
        (SELECT string_agg(DISTINCT quote_literal(lexeme), ' | ') FROM lexicon)
    END AS memory_query,
    (SELECT coalesce(json_agg(f ORDER BY f.raw DESC, f.kind, f.scope, f.agent_id, f.ord), '[]')
     FROM found AS f) AS matches

-- recall._GIVEN
WITH
terms AS (
    SELECT DISTINCT u.lexeme COLLATE "C" AS term
    FROM unnest(to_tsvector('english', %(rank_query)s)) AS u
),
searched_blocks AS (
    SELECT b.scope, b.agent_id, b.line_count, b.lexeme_total, b.speakers
    FROM archival_vocabulary AS b
    WHERE
    b.tenant_id = %(tenant_id)s
      AND ((b.user_id = %(user_id)s
            AND ((b.scope = 'user' AND b.agent_id = '')
                 OR (b.scope = 'agent' AND b.agent_id = %(agent_id)s)))
           OR (b.user_id = '' AND b.scope = 'workspace'
               AND b.agent_id = %(block_workspace_id)s))
),
sizes AS (
    SELECT coalesce((SELECT sum(line_count) FROM searched_blocks), 0)::float8 AS lines,
           coalesce((SELECT sum(lexeme_total) FROM searched_blocks), 0)::float8 AS lexemes,
           (SELECT count(*) FROM (
                SELECT
                  FROM memories AS m
                  WHERE %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
                LIMIT %(rank_memory_bound)s) AS c)::float8 AS memories
),
scanned AS (
    SELECT lines <= %(rank_scan)s AS lines, memories <= %(rank_scan)s AS memories FROM sizes
),
memory_docs AS (
    SELECT 'memory' AS kind, m.scope,
           CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           CASE WHEN m.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           m.id AS memory_id,
             to_tsvector('english'::regconfig, (m.key::text || ' ') || m.value) AS lexemes,
             row_number() OVER (
             ORDER BY m.id) AS ord
    FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = ANY (%(rank_memory_ids)b::uuid[])
      AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
),
term_lines AS (
    SELECT t.term, sum(s.lines) AS lines
    FROM terms AS t CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = t.term
    GROUP BY t.term
),
memory_lexemes AS (
    SELECT u.lexeme COLLATE "C" AS lexeme, count(*) AS docs
    FROM memory_docs AS d, unnest(d.lexemes) AS u
    GROUP BY 1
),
missing AS (
    SELECT t.term FROM terms AS t
    WHERE length(t.term) >= 4
      AND t.term NOT IN (SELECT term FROM term_lines)
      AND t.term NOT IN (SELECT lexeme FROM memory_lexemes)
    ORDER BY length(t.term) DESC, t.term
    LIMIT 32
),
close AS (
    SELECT m.term, s.lexeme, sum(s.lines) AS lines
    FROM missing AS m CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s
      ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id
     AND s.lexeme >= left(m.term, 2)
     AND s.lexeme < left(m.term, 2) || chr(1114111)
    WHERE similarity(s.lexeme, m.term) >= 0.4
    GROUP BY m.term, s.lexeme
    UNION ALL
    SELECT m.term, x.lexeme, 0
    FROM missing AS m, memory_lexemes AS x
    WHERE starts_with(x.lexeme, left(m.term, 2))
      AND similarity(x.lexeme, m.term) >= 0.4
),
lexicon AS (
    SELECT t.term, t.term AS lexeme, 1.0::float8 AS weight, coalesce(x.lines, 0)::float8 AS lines
    FROM terms AS t LEFT JOIN term_lines AS x USING (term)
    UNION ALL
    SELECT term, lexeme, similarity(lexeme, term)::float8, sum(lines)::float8
    FROM close GROUP BY term, lexeme
),
df AS (
    SELECT x.term, sum(x.lines + coalesce(m.docs, 0)) AS df
    FROM lexicon AS x LEFT JOIN memory_lexemes AS m USING (lexeme)
    GROUP BY x.term
),
stats AS (
    SELECT s.lines + s.memories AS n,
           greatest(CASE WHEN s.lines > 0 THEN s.lexemes / s.lines
                         ELSE (SELECT avg(length(lexemes)) FROM memory_docs) END, 1)::float8
               AS avgdl
    FROM sizes AS s
),
idf AS (
    SELECT t.term, ln(1 + (s.n - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS idf
    FROM terms AS t LEFT JOIN df USING (term) CROSS JOIN stats AS s
),
best AS (
    SELECT sum(idf) AS top FROM idf
),
chosen AS (
    SELECT lexeme, row_number() OVER (ORDER BY lines, lexeme) AS rarity FROM (
        SELECT lexeme, lines, sum(lines) OVER (ORDER BY lines, lexeme) AS upto
        FROM (SELECT lexeme, max(lines) AS lines FROM lexicon GROUP BY lexeme) AS x
    ) AS y
    WHERE upto - lines < %(rank_cap)s
),
line_docs AS (
    SELECT 'line' AS kind, l.scope, l.agent_id, l.ordinal::bigint AS ord, l.lexemes
    FROM archival_lines AS l
    WHERE (SELECT lines FROM scanned) AND
    l.tenant_id = %(tenant_id)s
      AND ((l.user_id = %(user_id)s
            AND ((l.scope = 'user' AND l.agent_id = '')
                 OR (l.scope = 'agent' AND l.agent_id = %(agent_id)s)))
           OR (l.user_id = '' AND l.scope = 'workspace'
               AND l.agent_id = %(block_workspace_id)s))
      AND ts_match_vq(l.lexemes, (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery
                                  FROM (SELECT DISTINCT lexeme FROM lexicon) AS x))
    UNION ALL
    SELECT 'line', l.scope, l.agent_id, l.ordinal::bigint, l.lexemes
    FROM (
        SELECT p.scope, p.agent_id, p.ord, min(p.rarity) AS rarity
        FROM (
            SELECT b.scope, b.agent_id, o.ord, c.rarity
            FROM chosen AS c
            CROSS JOIN searched_blocks AS b
            JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = c.lexeme
            CROSS JOIN LATERAL unnest(s.ordinals[1:%(rank_cap)s]) AS o(ord)
            WHERE NOT (SELECT lines FROM scanned)
        ) AS p
        GROUP BY p.scope, p.agent_id, p.ord
        ORDER BY rarity, p.ord
        LIMIT %(rank_cap)s
    ) AS x
    JOIN archival_lines AS l ON l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN x.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND l.scope = x.scope AND l.agent_id = x.agent_id AND l.ordinal = x.ord
),
docs AS (
    SELECT kind, scope, agent_id, ord, lexemes FROM line_docs
    UNION ALL
    SELECT kind, scope, agent_id, ord, lexemes FROM memory_docs
),
hits AS (
    SELECT d.kind, d.scope, d.agent_id, d.ord, x.term, x.weight,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf,
           length(d.lexemes)::float8 AS dl
    FROM docs AS d
    CROSS JOIN LATERAL unnest(d.lexemes) AS u
    JOIN lexicon AS x ON x.lexeme = u.lexeme COLLATE "C"
),
scored AS (
    SELECT h.kind, h.scope, h.agent_id, h.ord,
           sum(i.idf * h.weight * h.tf * (1.2 + 1)
               / (h.tf + 1.2 * (1 - 0.4 + 0.4 * h.dl / s.avgdl))) AS own
    FROM hits AS h JOIN idf AS i USING (term) CROSS JOIN stats AS s
    GROUP BY h.kind, h.scope, h.agent_id, h.ord
),
context AS (
    SELECT sc.kind, sc.scope, sc.agent_id, sc.ord + v.step AS ord, max(sc.own * v.share) AS near
    FROM scored AS sc
    JOIN searched_blocks AS k
      ON sc.kind = 'line' AND k.scope = sc.scope AND k.agent_id = sc.agent_id
     AND cardinality(k.speakers) >= 2
    CROSS JOIN (VALUES (-2, 0.5), (-1, 1.0), (1, 1.0), (2, 0.5)) AS v(step, share)
    GROUP BY sc.kind, sc.scope, sc.agent_id, sc.ord + v.step
),
combined AS (
    SELECT coalesce(sc.kind, cx.kind) AS kind, coalesce(sc.scope, cx.scope) AS scope,
           coalesce(sc.agent_id, cx.agent_id) AS agent_id, coalesce(sc.ord, cx.ord) AS ord,
           coalesce(sc.own, 0) + 0.5 * coalesce(cx.near, 0) AS points,
           coalesce(sc.own, 0) AS own
    FROM scored AS sc
    FULL JOIN context AS cx
      ON (cx.kind, cx.scope, cx.agent_id, cx.ord) = (sc.kind, sc.scope, sc.agent_id, sc.ord)
),
ranked AS (
    SELECT c.kind, c.scope, c.agent_id, coalesce(m.workspace_id, '') AS workspace_id, c.ord,
           m.memory_id, c.points / nullif(b.top, 0) AS raw, c.own / nullif(b.top, 0) AS own
    FROM combined AS c
    CROSS JOIN best AS b
    LEFT JOIN searched_blocks AS k
      ON c.kind = 'line' AND k.scope = c.scope AND k.agent_id = c.agent_id
    LEFT JOIN memory_docs AS m
      ON c.kind = 'memory' AND m.ord = c.ord
    WHERE (c.kind = 'line' AND c.ord BETWEEN 1 AND k.line_count) OR m.memory_id IS NOT NULL
)

-- recall._RANK_AT
WITH terms AS (
  SELECT nullif(replace(plainto_tsquery('english', %(query)s)::text, '&', '|'), '')::tsquery AS q),
lines AS (
    SELECT a.scope, a.agent_id, l.n::int AS line_number, l.content
    FROM (
    SELECT DISTINCT ON (v.user_id, v.scope, v.agent_id) v.scope, v.agent_id, v.content
    FROM block_versions AS v
    WHERE v.tenant_id = %(tenant_id)s AND v.label = 'archival'
      AND (v.user_id,
        v.scope,
        v.agent_id) IN ((%(user_id)s, 'user', ''),
        (%(user_id)s, 'agent', %(agent_id)s),
                ('', 'workspace', %(block_workspace_id)s))
      AND v.written_at <= %(as_of)s
    ORDER BY v.user_id, v.scope, v.agent_id, v.version DESC) AS a,
         regexp_split_to_table(a.content, E'\n') WITH ORDINALITY AS l(content, n)
    WHERE btrim(l.content, E' \t') <> ''
),
found AS (
    SELECT l.content, l.scope, l.agent_id, NULL::text AS workspace_id, l.line_number,
           NULL::uuid AS memory_id,
           ts_rank_cd(to_tsvector('english', l.content), terms.q, 32) AS score
    FROM lines AS l, terms
    WHERE to_tsvector('english', l.content) @@ terms.q
    UNION ALL
    SELECT CASE
    WHEN m.source = 'manual' AND m.key !~ '^memorize:[0-9a-f]{40}$'
    THEN m.key || ': ' || m.value ELSE m.value END, m.scope,
           CASE m.scope WHEN 'agent' THEN m.owner_id ELSE '' END,
           CASE m.scope WHEN 'workspace' THEN m.owner_id END, 0, m.id,
           ts_rank_cd(to_tsvector('english', m.key || ' ' || m.value), terms.q, 32)
    FROM (
    SELECT r.*
    FROM (SELECT DISTINCT ON (e.memory_id) e.tenant_id, e.memory_id, e.new_memory
          FROM memory_events AS e
          WHERE e.tenant_id = %(tenant_id)s AND (coalesce(e.new_memory, e.old_memory) ->> 'owner_id') IN (%(agent_id)s,
            coalesce(%(workspace_id)s::text, %(agent_id)s)) AND e.occurred_at <= %(as_of)s
          ORDER BY e.memory_id, e.occurred_at DESC, e.id DESC) AS e
    LEFT JOIN memories AS x ON x.tenant_id = %(tenant_id)s AND x.id = e.memory_id
    CROSS JOIN LATERAL jsonb_populate_record(NULL::memories, e.new_memory || jsonb_build_object(
        'tenant_id', e.tenant_id,
        'held_for_review', coalesce((e.new_memory ->> 'held_for_review')::boolean, false)
                           OR coalesce(x.held_for_review, false),
        'hold_reason', CASE WHEN coalesce((e.new_memory ->> 'held_for_review')::boolean, false)
                            THEN e.new_memory ->> 'hold_reason' ELSE x.hold_reason END,
        'text_by', CASE WHEN e.new_memory ? 'text_by' THEN e.new_memory ->> 'text_by'
                        WHEN e.new_memory ->> 'source' = 'manual'
                        THEN e.new_memory ->> 'updated_by' END,
        'expire_time', greatest((e.new_memory ->> 'expire_time')::timestamptz,
                                CASE WHEN e.new_memory ->> 'expire_time' IS NOT NULL
                                     THEN x.expire_time END))) AS r
    WHERE e.new_memory IS NOT NULL
      AND (x.expire_time IS NULL OR x.expire_time > statement_timestamp())) AS m, terms
    WHERE %(include_memories)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(workspace_id)s::text))
      AND m.superseded_by IS NULL AND NOT m.held_for_review
      AND tstzrange(m.valid_start_time, m.valid_end_time)
          * tstzrange(NULL, m.expire_time) @> %(as_of)s::timestamptz
      AND to_tsvector('english', m.key || ' ' || m.value) @@ terms.q
)
SELECT * FROM found
WHERE score >= %(min_score)s
ORDER BY score DESC, scope, agent_id, line_number, memory_id
LIMIT %(limit)s

-- recall._SCANNED
WITH
terms AS (
    SELECT DISTINCT u.lexeme COLLATE "C" AS term
    FROM unnest(to_tsvector('english', %(rank_query)s)) AS u
),
searched_blocks AS (
    SELECT b.scope, b.agent_id, b.line_count, b.lexeme_total, b.speakers
    FROM archival_vocabulary AS b
    WHERE
    b.tenant_id = %(tenant_id)s
      AND ((b.user_id = %(user_id)s
            AND ((b.scope = 'user' AND b.agent_id = '')
                 OR (b.scope = 'agent' AND b.agent_id = %(agent_id)s)))
           OR (b.user_id = '' AND b.scope = 'workspace'
               AND b.agent_id = %(block_workspace_id)s))
),
sizes AS (
    SELECT coalesce((SELECT sum(line_count) FROM searched_blocks), 0)::float8 AS lines,
           coalesce((SELECT sum(lexeme_total) FROM searched_blocks), 0)::float8 AS lexemes,
           (SELECT count(*) FROM (
                SELECT
                  FROM memories AS m
                  WHERE %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
                LIMIT %(rank_memory_bound)s) AS c)::float8 AS memories
),
scanned AS (
    SELECT lines <= %(rank_scan)s AS lines, memories <= %(rank_scan)s AS memories FROM sizes
),
memory_docs AS (
    SELECT 'memory' AS kind, m.scope,
           CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           CASE WHEN m.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           m.id AS memory_id,
             to_tsvector('english'::regconfig, (m.key::text || ' ') || m.value) AS lexemes,
             row_number() OVER (
             ORDER BY m.id) AS ord
    FROM memories AS m
    WHERE (
      SELECT memories
      FROM scanned) AND %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND (m.expire_time IS NULL OR m.expire_time > now()) AND m.superseded_by IS NULL AND NOT m.held_for_review AND tstzrange(m.valid_start_time,
        m.valid_end_time) @> now()
),
term_lines AS (
    SELECT t.term, sum(s.lines) AS lines
    FROM terms AS t CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = t.term
    GROUP BY t.term
),
memory_lexemes AS (
    SELECT u.lexeme COLLATE "C" AS lexeme, count(*) AS docs
    FROM memory_docs AS d, unnest(d.lexemes) AS u
    GROUP BY 1
),
missing AS (
    SELECT t.term FROM terms AS t
    WHERE length(t.term) >= 4
      AND t.term NOT IN (SELECT term FROM term_lines)
      AND t.term NOT IN (SELECT lexeme FROM memory_lexemes)
    ORDER BY length(t.term) DESC, t.term
    LIMIT 32
),
close AS (
    SELECT m.term, s.lexeme, sum(s.lines) AS lines
    FROM missing AS m CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s
      ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id
     AND s.lexeme >= left(m.term, 2)
     AND s.lexeme < left(m.term, 2) || chr(1114111)
    WHERE similarity(s.lexeme, m.term) >= 0.4
    GROUP BY m.term, s.lexeme
    UNION ALL
    SELECT m.term, x.lexeme, 0
    FROM missing AS m, memory_lexemes AS x
    WHERE starts_with(x.lexeme, left(m.term, 2))
      AND similarity(x.lexeme, m.term) >= 0.4
),
lexicon AS (
    SELECT t.term, t.term AS lexeme, 1.0::float8 AS weight, coalesce(x.lines, 0)::float8 AS lines
    FROM terms AS t LEFT JOIN term_lines AS x USING (term)
    UNION ALL
    SELECT term, lexeme, similarity(lexeme, term)::float8, sum(lines)::float8
    FROM close GROUP BY term, lexeme
),
df AS (
    SELECT x.term, sum(x.lines + coalesce(m.docs, 0)) AS df
    FROM lexicon AS x LEFT JOIN memory_lexemes AS m USING (lexeme)
    GROUP BY x.term
),
stats AS (
    SELECT s.lines + s.memories AS n,
           greatest(CASE WHEN s.lines > 0 THEN s.lexemes / s.lines
                         ELSE (SELECT avg(length(lexemes)) FROM memory_docs) END, 1)::float8
               AS avgdl
    FROM sizes AS s
),
idf AS (
    SELECT t.term, ln(1 + (s.n - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS idf
    FROM terms AS t LEFT JOIN df USING (term) CROSS JOIN stats AS s
),
best AS (
    SELECT sum(idf) AS top FROM idf
),
chosen AS (
    SELECT lexeme, row_number() OVER (ORDER BY lines, lexeme) AS rarity FROM (
        SELECT lexeme, lines, sum(lines) OVER (ORDER BY lines, lexeme) AS upto
        FROM (SELECT lexeme, max(lines) AS lines FROM lexicon GROUP BY lexeme) AS x
    ) AS y
    WHERE upto - lines < %(rank_cap)s
),
line_docs AS (
    SELECT 'line' AS kind, l.scope, l.agent_id, l.ordinal::bigint AS ord, l.lexemes
    FROM archival_lines AS l
    WHERE (SELECT lines FROM scanned) AND
    l.tenant_id = %(tenant_id)s
      AND ((l.user_id = %(user_id)s
            AND ((l.scope = 'user' AND l.agent_id = '')
                 OR (l.scope = 'agent' AND l.agent_id = %(agent_id)s)))
           OR (l.user_id = '' AND l.scope = 'workspace'
               AND l.agent_id = %(block_workspace_id)s))
      AND ts_match_vq(l.lexemes, (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery
                                  FROM (SELECT DISTINCT lexeme FROM lexicon) AS x))
    UNION ALL
    SELECT 'line', l.scope, l.agent_id, l.ordinal::bigint, l.lexemes
    FROM (
        SELECT p.scope, p.agent_id, p.ord, min(p.rarity) AS rarity
        FROM (
            SELECT b.scope, b.agent_id, o.ord, c.rarity
            FROM chosen AS c
            CROSS JOIN searched_blocks AS b
            JOIN archival_terms AS s ON s.tenant_id = %(tenant_id)s AND s.user_id = CASE WHEN b.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND s.scope = b.scope AND s.agent_id = b.agent_id AND s.lexeme = c.lexeme
            CROSS JOIN LATERAL unnest(s.ordinals[1:%(rank_cap)s]) AS o(ord)
            WHERE NOT (SELECT lines FROM scanned)
        ) AS p
        GROUP BY p.scope, p.agent_id, p.ord
        ORDER BY rarity, p.ord
        LIMIT %(rank_cap)s
    ) AS x
    JOIN archival_lines AS l ON l.tenant_id = %(tenant_id)s AND l.user_id = CASE WHEN x.scope = 'workspace' THEN '' ELSE %(user_id)s END
      AND l.scope = x.scope AND l.agent_id = x.agent_id AND l.ordinal = x.ord
),
docs AS (
    SELECT kind, scope, agent_id, ord, lexemes FROM line_docs
    UNION ALL
    SELECT kind, scope, agent_id, ord, lexemes FROM memory_docs
),
hits AS (
    SELECT d.kind, d.scope, d.agent_id, d.ord, x.term, x.weight,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf,
           length(d.lexemes)::float8 AS dl
    FROM docs AS d
    CROSS JOIN LATERAL unnest(d.lexemes) AS u
    JOIN lexicon AS x ON x.lexeme = u.lexeme COLLATE "C"
),
scored AS (
    SELECT h.kind, h.scope, h.agent_id, h.ord,
           sum(i.idf * h.weight * h.tf * (1.2 + 1)
               / (h.tf + 1.2 * (1 - 0.4 + 0.4 * h.dl / s.avgdl))) AS own
    FROM hits AS h JOIN idf AS i USING (term) CROSS JOIN stats AS s
    GROUP BY h.kind, h.scope, h.agent_id, h.ord
),
context AS (
    SELECT sc.kind, sc.scope, sc.agent_id, sc.ord + v.step AS ord, max(sc.own * v.share) AS near
    FROM scored AS sc
    JOIN searched_blocks AS k
      ON sc.kind = 'line' AND k.scope = sc.scope AND k.agent_id = sc.agent_id
     AND cardinality(k.speakers) >= 2
    CROSS JOIN (VALUES (-2, 0.5), (-1, 1.0), (1, 1.0), (2, 0.5)) AS v(step, share)
    GROUP BY sc.kind, sc.scope, sc.agent_id, sc.ord + v.step
),
combined AS (
    SELECT coalesce(sc.kind, cx.kind) AS kind, coalesce(sc.scope, cx.scope) AS scope,
           coalesce(sc.agent_id, cx.agent_id) AS agent_id, coalesce(sc.ord, cx.ord) AS ord,
           coalesce(sc.own, 0) + 0.5 * coalesce(cx.near, 0) AS points,
           coalesce(sc.own, 0) AS own
    FROM scored AS sc
    FULL JOIN context AS cx
      ON (cx.kind, cx.scope, cx.agent_id, cx.ord) = (sc.kind, sc.scope, sc.agent_id, sc.ord)
),
ranked AS (
    SELECT c.kind, c.scope, c.agent_id, coalesce(m.workspace_id, '') AS workspace_id, c.ord,
           m.memory_id, c.points / nullif(b.top, 0) AS raw, c.own / nullif(b.top, 0) AS own
    FROM combined AS c
    CROSS JOIN best AS b
    LEFT JOIN searched_blocks AS k
      ON c.kind = 'line' AND k.scope = c.scope AND k.agent_id = c.agent_id
    LEFT JOIN memory_docs AS m
      ON c.kind = 'memory' AND m.ord = c.ord
    WHERE (c.kind = 'line' AND c.ord BETWEEN 1 AND k.line_count) OR m.memory_id IS NOT NULL
)

-- standby._STATE
SELECT pg_is_in_recovery() AS recovering,
       CASE WHEN pg_last_wal_receive_lsn() IS NULL
              OR pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0
            ELSE extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())
       END::float8 AS lag

-- transfer._ACROSS_OWNERS
SELECT m.id FROM memories AS m
JOIN memories AS r ON r.tenant_id = m.tenant_id AND r.id = m.superseded_by
WHERE m.tenant_id = %(tenant_id)s AND m.id = ANY(%(ids)s)
      AND (r.scope <> m.scope OR r.owner_id <> m.owner_id)

-- transfer._BLOCKS
SELECT user_id, scope, agent_id, label, content FROM blocks
WHERE tenant_id = %(tenant_id)s ORDER BY user_id, scope, agent_id, label

-- transfer._CARD_TYPES
SELECT name, re_examinable, actions, decision_actions, created_at, updated_at
  FROM card_types
  WHERE tenant_id = %(tenant_id)s
  ORDER BY name

-- transfer._CONVERSATIONS
SELECT provider,
  conversation_id,
  messages,
  message_count,
  created_at,
  updated_at,
  raw_events,
  raw_event_count
FROM conversations WHERE tenant_id = %(tenant_id)s ORDER BY provider, conversation_id

-- transfer._DECISIONS
SELECT d.id,
  d.run_id,
  d.agent_id,
  d.card_type,
  d.action,
  d.summary,
  d.result,
  d.resolution_status,
  d.created_at,
  d.resolved_at,
    (SELECT r.conviction_score FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id
     ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS latest_conviction_score,
    (SELECT count(*) FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id) AS reexamination_count
       FROM decisions AS d
WHERE d.tenant_id = %(tenant_id)s ORDER BY d.created_at, d.id

-- transfer._MEMORIES
SELECT m.id,
  m.scope,
  m.owner_id,
  m.key,
  m.value,
  m.pinned,
  m.importance,
  m.source,
  m.tags,
  m.confidence,
  m.metadata,
  m.version,
  m.created_at,
  m.updated_at,
  m.conversation_provider,
  m.conversation_id,
  m.expire_time,
  m.superseded_by,
  m.last_used_time,
  m.valid_start_time,
  m.valid_end_time,
  m.note,
  m.held_for_review,
  m.hold_reason,
  (
    SELECT coalesce(json_agg(g ORDER BY g.ordinal), '[]')
    FROM memory_groundings AS g
    WHERE g.tenant_id = %(tenant_id)s AND g.memory_id = m.id
) AS groundings,
       NOT m.held_for_review AND NOT (m.text_by IS NULL AND m.screened_hash IS DISTINCT
         FROM hashtextextended(m.key || E'\n' || m.value, 0)) AS screened
FROM memories AS m
WHERE m.tenant_id = %(tenant_id)s AND (m.expire_time IS NULL OR m.expire_time > now())
ORDER BY m.scope, m.owner_id, m.key

-- transfer._PUT_CARD_TYPE
INSERT INTO card_types (tenant_id, name, re_examinable, actions, decision_actions,
                        created_at, updated_at)
VALUES (%(tenant_id)s, %(name)s, %(re_examinable)s, %(actions)s, %(decision_actions)s,
        %(created_at)s, %(updated_at)s)
ON CONFLICT DO NOTHING

-- transfer._PUT_CONVERSATION
INSERT INTO conversations (tenant_id, provider, conversation_id, messages, message_count,
                           raw_events, raw_event_count, created_at, updated_at)
VALUES (%(tenant_id)s, %(provider)s, %(conversation_id)s, %(messages)s, %(message_count)s,
        %(raw_events)s, %(raw_event_count)s, %(created_at)s, %(updated_at)s)
ON CONFLICT DO NOTHING

-- transfer._PUT_DECISION
WITH registered AS (
    SELECT EXISTS (SELECT FROM card_types
                   WHERE tenant_id = %(tenant_id)s AND name = %(card_type)s) AS yes
),
inserted AS (
    INSERT INTO decisions (tenant_id, id, run_id, agent_id, card_type, action, summary,
                           result, resolution_status, created_at, resolved_at)
    SELECT %(tenant_id)s, %(id)s, %(run_id)s, %(agent_id)s, %(card_type)s, %(action)s,
           %(summary)s, %(result)s, %(resolution_status)s, %(created_at)s, %(resolved_at)s
    FROM registered WHERE registered.yes
    ON CONFLICT DO NOTHING
    RETURNING tenant_id, id
),
reexaminations AS (
    INSERT INTO reexaminations (tenant_id, id, parent_decision_id, run_id, conviction_score,
                                notes, suggested_action, created_at)
    SELECT i.tenant_id, r.id, i.id, r.run_id, r.conviction_score, r.notes,
           r.suggested_action, r.created_at
    FROM inserted AS i
    CROSS JOIN jsonb_to_recordset(%(reexaminations)s::jsonb) AS r(
        id uuid, run_id text, conviction_score smallint, notes text, suggested_action text,
        created_at timestamptz)
    ON CONFLICT DO NOTHING
    RETURNING id
)
SELECT (SELECT yes FROM registered) AS registered, (SELECT count(*) FROM inserted) AS n,
       ARRAY(SELECT id FROM reexaminations) AS reexamined

-- transfer._PUT_MEMORY
WITH inserted AS (
    INSERT INTO memories (tenant_id,
      id,
      scope,
      owner_id,
      key,
      value,
      pinned,
      importance,
      source,
      tags,
      confidence,
      metadata,
      created_by,
      updated_by,
      conversation_provider,
      conversation_id,
      expire_time,
      valid_start_time,
      valid_end_time,
      note,
      created_at,
      updated_at,
      superseded_by,
      held_for_review,
      hold_reason,
      screened_hash)
    SELECT %(tenant_id)s::text,
      %(id)s::UUID,
      %(scope)s::text,
      %(owner_id)s::text,
      %(key)s::text,
      %(value)s::text,
      coalesce(%(pinned)s::bool, false),
      coalesce(%(importance)s::int2, 0),
      %(source)s::text,
      coalesce(%(tags)s::TEXT[], '{}'),
      %(confidence)s::float8,
      coalesce(%(metadata)s::JSONB, '{}'::jsonb),
      %(actor)s,
      %(actor)s,
      %(conversation_provider)s::text,
      %(conversation_id)s::text,
      coalesce(%(expire_time)s::timestamptz, clock_timestamp() + %(ttl)s::interval),
      %(valid_start_time)s::timestamptz,
      %(valid_end_time)s::timestamptz,
      coalesce(%(note)s::text, ''),
      %(created_at)s::timestamptz,
      %(updated_at)s::timestamptz,
      %(superseded_by)s::uuid,
      %(held_for_review)s::boolean,
      %(hold_reason)s::text,
      CASE WHEN %(screened)s::boolean THEN hashtextextended(%(key)s::text || E'\n' || %(value)s::text, 0) END
    ON CONFLICT DO NOTHING
    RETURNING *
),
groundings AS (
    INSERT INTO memory_groundings (tenant_id, memory_id, ordinal, message_position,
                                   provider_message_id, start_character, end_character,
                                   quote, raw_event_index, raw_start_character,
                                   raw_end_character, metadata)
    SELECT i.tenant_id, i.id, g.ordinal, g.message_position, g.provider_message_id,
           g.start_character, g.end_character, g.quote, g.raw_event_index,
           g.raw_start_character, g.raw_end_character, g.metadata
    FROM inserted AS i
    CROSS JOIN jsonb_to_recordset(%(groundings)s::jsonb) AS g(
        ordinal smallint, message_position integer, provider_message_id text,
        start_character integer, end_character integer, quote text, raw_event_index integer,
        raw_start_character integer, raw_end_character integer, metadata jsonb)
),
created AS (
    INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id,
                               occurred_at, old_memory, new_memory)
    SELECT i.tenant_id, gen_random_uuid(), i.id, 'created', %(actor)s, clock_timestamp(),
           NULL,
             to_jsonb(i) - '{tenant_id,embedding,embedding_model,embedded_hash,index_lease_until,screened_hash}'::text[]
    FROM inserted AS i
)
SELECT count(*) AS n FROM inserted

-- transfer._REEXAMINATIONS
SELECT id, parent_decision_id, run_id, conviction_score, notes, suggested_action, created_at
  FROM reexaminations
WHERE tenant_id = %(tenant_id)s ORDER BY created_at, id

-- usage._RECORD
INSERT INTO usage_records (tenant_id,
  id,
  synthetic_session_id,
  agent_id,
  model,
  input_tokens,
  output_tokens,
  cost_usd,
  outcome)
VALUES (%(tenant_id)s::text,
  gen_random_uuid(),
  %(synthetic_session_id)s::text,
  %(agent_id)s::text,
  %(model)s::text,
  %(input_tokens)s::BIGINT,
  %(output_tokens)s::BIGINT,
  %(cost_usd)s::numeric,
  %(outcome)s::text)

-- usage._REPORT
WITH matched AS NOT MATERIALIZED (
    SELECT id,
      synthetic_session_id,
      agent_id,
      model,
      input_tokens,
      output_tokens,
      cost_usd,
      outcome,
      recorded_at
    FROM usage_records
    WHERE tenant_id = %(tenant_id)s
      AND starts_with(synthetic_session_id, %(prefix)s)
      AND recorded_at >= coalesce(%(start)s::timestamptz, '-infinity')
      AND recorded_at < coalesce(%(end)s::timestamptz, 'infinity')
),
totals AS (
    SELECT coalesce(sum(input_tokens), 0) AS total_input_tokens,
           coalesce(sum(output_tokens), 0) AS total_output_tokens,
           coalesce(sum(cost_usd), 0) AS total_cost_usd
    FROM matched
)
SELECT r.id,
  r.synthetic_session_id,
  r.agent_id,
  r.model,
  r.input_tokens,
  r.output_tokens,
  r.cost_usd,
  r.outcome,
  r.recorded_at,
       t.total_input_tokens, t.total_output_tokens, t.total_cost_usd
FROM totals AS t
LEFT JOIN LATERAL (
    SELECT * FROM matched ORDER BY recorded_at, id LIMIT 1000
) AS r ON true
ORDER BY r.recorded_at, r.id

-- vector_indexes._ROWS
SELECT c.reltuples
  FROM pg_class AS c
  JOIN pg_index AS i ON i.indexrelid = c.oid
  WHERE c.relname = %(name)s AND i.indisvalid

-- vectors.PGVECTOR_INSTALLED
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'vector') AS installed
