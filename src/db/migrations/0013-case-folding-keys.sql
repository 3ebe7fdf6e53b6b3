-- One rule for case-insensitive names (issue 25): the key of a tag, a team name and a username is foldCase(name)
-- (src/modules/text/fold.ts: NFKC, Unicode full case folding, NFKC), and the service compares keys, never lower()
-- of a name. PostgreSQL's lower() is another rule (it maps İ to i where foldCase gives i + U+0307, keeps ß where
-- foldCase gives ss, and follows the database's locale), and a tag written under one rule and looked up under the
-- other was not found after it was written (500 on `tags[]=İı`).

-- 1. Team names and usernames are ASCII (`[A-Za-z0-9_-]`, src/modules/teams/names.ts). On ASCII, foldCase is A-Z to
-- a-z, which translate() does whatever the database's locale (lower() does not in a Turkish one: I becomes ı), so
-- the key is a generated column; the checks keep names ASCII, so it cannot differ from what the service computes.
-- The unique indexes on lower(...) stay for the lookups that still compare lower() of an ASCII name (access/scope.ts,
-- the logs' and notifications' team filter, mentions, sign-in); on ASCII names they never refuse what the keys allow.
do $$
declare
  names text;
begin
  select string_agg(format('%s %s', kind, name), ', ') into names
    from (select 'team' as kind, name from teams where octet_length(name) <> length(name)
          union all select 'user', username from users where octet_length(username) <> length(username)) odd;
  if names is not null then
    raise exception 'names must be ASCII (letters, digits, _ and -); rename these first: %', names;
  end if;
end
$$;
alter table teams add constraint teams_name_ascii check (octet_length(name) = length(name));
alter table teams add column name_key varchar(39) not null
  generated always as (translate(name, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')) stored;
create unique index teams_name_key_unique on teams (name_key);
alter table users add constraint users_username_ascii check (octet_length(username) = length(username));
alter table users add column username_key varchar(39) not null
  generated always as (translate(username, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')) stored;
create unique index users_username_key_unique on users (username_key);

-- 2. Tags are any text: their key is computed by the service (src/modules/issues/issues.service.ts) and stored in
-- `name_key`, unique per note. The tags written before are given theirs here, by foldCase written out in SQL for this
-- once (it is gone at the end of this migration): NFKC, each character replaced by its folding, NFKC. The foldings
-- are those of Node 24 (Unicode 17) for every code point that NFKC leaves as it is; test/unit/fold.test.ts checks
-- them against foldCase for every code point, and test/api/case-folding.test.ts runs this function on both databases.
-- fold: begin
create temporary table case_folding_0013 (code_point int primary key, folded text not null);
-- runs (first, last, step, delta): first, first + step, ..., last each fold to the one character `delta` further on
insert into case_folding_0013 (code_point, folded)
select g, chr(g + r.delta)
  from (values
          (65, 90, 1, 32), -- A..Z
          (192, 214, 1, 32), -- À..Ö
          (216, 222, 1, 32), -- Ø..Þ
          (256, 302, 2, 1), -- Ā..Į every 2
          (308, 310, 2, 1), -- Ĵ..Ķ every 2
          (313, 317, 2, 1), -- Ĺ..Ľ every 2
          (321, 327, 2, 1), -- Ł..Ň every 2
          (330, 374, 2, 1), -- Ŋ..Ŷ every 2
          (376, 376, 1, -121), -- Ÿ -> ÿ
          (377, 381, 2, 1), -- Ź..Ž every 2
          (385, 385, 1, 210), -- Ɓ -> ɓ
          (386, 388, 2, 1), -- Ƃ..Ƅ every 2
          (390, 390, 1, 206), -- Ɔ -> ɔ
          (391, 391, 1, 1), -- Ƈ -> ƈ
          (393, 394, 1, 205), -- Ɖ..Ɗ
          (395, 395, 1, 1), -- Ƌ -> ƌ
          (398, 398, 1, 79), -- Ǝ -> ǝ
          (399, 399, 1, 202), -- Ə -> ə
          (400, 400, 1, 203), -- Ɛ -> ɛ
          (401, 401, 1, 1), -- Ƒ -> ƒ
          (403, 403, 1, 205), -- Ɠ -> ɠ
          (404, 404, 1, 207), -- Ɣ -> ɣ
          (406, 406, 1, 211), -- Ɩ -> ɩ
          (407, 407, 1, 209), -- Ɨ -> ɨ
          (408, 408, 1, 1), -- Ƙ -> ƙ
          (412, 412, 1, 211), -- Ɯ -> ɯ
          (413, 413, 1, 213), -- Ɲ -> ɲ
          (415, 415, 1, 214), -- Ɵ -> ɵ
          (416, 420, 2, 1), -- Ơ..Ƥ every 2
          (422, 422, 1, 218), -- Ʀ -> ʀ
          (423, 423, 1, 1), -- Ƨ -> ƨ
          (425, 425, 1, 218), -- Ʃ -> ʃ
          (428, 428, 1, 1), -- Ƭ -> ƭ
          (430, 430, 1, 218), -- Ʈ -> ʈ
          (431, 431, 1, 1), -- Ư -> ư
          (433, 434, 1, 217), -- Ʊ..Ʋ
          (435, 437, 2, 1), -- Ƴ..Ƶ every 2
          (439, 439, 1, 219), -- Ʒ -> ʒ
          (440, 440, 1, 1), -- Ƹ -> ƹ
          (444, 444, 1, 1), -- Ƽ -> ƽ
          (461, 475, 2, 1), -- Ǎ..Ǜ every 2
          (478, 494, 2, 1), -- Ǟ..Ǯ every 2
          (500, 500, 1, 1), -- Ǵ -> ǵ
          (502, 502, 1, -97), -- Ƕ -> ƕ
          (503, 503, 1, -56), -- Ƿ -> ƿ
          (504, 542, 2, 1), -- Ǹ..Ȟ every 2
          (544, 544, 1, -130), -- Ƞ -> ƞ
          (546, 562, 2, 1), -- Ȣ..Ȳ every 2
          (570, 570, 1, 10795), -- Ⱥ -> ⱥ
          (571, 571, 1, 1), -- Ȼ -> ȼ
          (573, 573, 1, -163), -- Ƚ -> ƚ
          (574, 574, 1, 10792), -- Ⱦ -> ⱦ
          (577, 577, 1, 1), -- Ɂ -> ɂ
          (579, 579, 1, -195), -- Ƀ -> ƀ
          (580, 580, 1, 69), -- Ʉ -> ʉ
          (581, 581, 1, 71), -- Ʌ -> ʌ
          (582, 590, 2, 1), -- Ɇ..Ɏ every 2
          (837, 837, 1, 116), -- ͅ -> ι
          (880, 882, 2, 1), -- Ͱ..Ͳ every 2
          (886, 886, 1, 1), -- Ͷ -> ͷ
          (895, 895, 1, 116), -- Ϳ -> ϳ
          (902, 902, 1, 38), -- Ά -> ά
          (904, 906, 1, 37), -- Έ..Ί
          (908, 908, 1, 64), -- Ό -> ό
          (910, 911, 1, 63), -- Ύ..Ώ
          (913, 929, 1, 32), -- Α..Ρ
          (931, 939, 1, 32), -- Σ..Ϋ
          (962, 962, 1, 1), -- ς -> σ
          (975, 975, 1, 8), -- Ϗ -> ϗ
          (984, 1006, 2, 1), -- Ϙ..Ϯ every 2
          (1015, 1015, 1, 1), -- Ϸ -> ϸ
          (1018, 1018, 1, 1), -- Ϻ -> ϻ
          (1021, 1023, 1, -130), -- Ͻ..Ͽ
          (1024, 1039, 1, 80), -- Ѐ..Џ
          (1040, 1071, 1, 32), -- А..Я
          (1120, 1152, 2, 1), -- Ѡ..Ҁ every 2
          (1162, 1214, 2, 1), -- Ҋ..Ҿ every 2
          (1216, 1216, 1, 15), -- Ӏ -> ӏ
          (1217, 1229, 2, 1), -- Ӂ..Ӎ every 2
          (1232, 1326, 2, 1), -- Ӑ..Ԯ every 2
          (1329, 1366, 1, 48), -- Ա..Ֆ
          (4256, 4293, 1, 7264), -- Ⴀ..Ⴥ
          (4295, 4295, 1, 7264), -- Ⴧ -> ⴧ
          (4301, 4301, 1, 7264), -- Ⴭ -> ⴭ
          (5112, 5117, 1, -8), -- ᏸ..ᏽ
          (7296, 7296, 1, -6222), -- ᲀ -> в
          (7297, 7297, 1, -6221), -- ᲁ -> д
          (7298, 7298, 1, -6212), -- ᲂ -> о
          (7299, 7300, 1, -6210), -- ᲃ..ᲄ
          (7301, 7301, 1, -6211), -- ᲅ -> т
          (7302, 7302, 1, -6204), -- ᲆ -> ъ
          (7303, 7303, 1, -6180), -- ᲇ -> ѣ
          (7304, 7304, 1, 35267), -- ᲈ -> ꙋ
          (7305, 7305, 1, 1), -- Ᲊ -> ᲊ
          (7312, 7354, 1, -3008), -- Ა..Ჺ
          (7357, 7359, 1, -3008), -- Ჽ..Ჿ
          (7680, 7828, 2, 1), -- Ḁ..Ẕ every 2
          (7840, 7934, 2, 1), -- Ạ..Ỿ every 2
          (7944, 7951, 1, -8), -- Ἀ..Ἇ
          (7960, 7965, 1, -8), -- Ἐ..Ἕ
          (7976, 7983, 1, -8), -- Ἠ..Ἧ
          (7992, 7999, 1, -8), -- Ἰ..Ἷ
          (8008, 8013, 1, -8), -- Ὀ..Ὅ
          (8025, 8031, 2, -8), -- Ὑ..Ὗ every 2
          (8040, 8047, 1, -8), -- Ὠ..Ὧ
          (8120, 8121, 1, -8), -- Ᾰ..Ᾱ
          (8122, 8122, 1, -74), -- Ὰ -> ὰ
          (8136, 8138, 2, -86), -- Ὲ..Ὴ every 2
          (8152, 8153, 1, -8), -- Ῐ..Ῑ
          (8154, 8154, 1, -100), -- Ὶ -> ὶ
          (8168, 8169, 1, -8), -- Ῠ..Ῡ
          (8170, 8170, 1, -112), -- Ὺ -> ὺ
          (8172, 8172, 1, -7), -- Ῥ -> ῥ
          (8184, 8184, 1, -128), -- Ὸ -> ὸ
          (8186, 8186, 1, -126), -- Ὼ -> ὼ
          (8498, 8498, 1, 28), -- Ⅎ -> ⅎ
          (8579, 8579, 1, 1), -- Ↄ -> ↄ
          (11264, 11311, 1, 48), -- Ⰰ..Ⱟ
          (11360, 11360, 1, 1), -- Ⱡ -> ⱡ
          (11362, 11362, 1, -10743), -- Ɫ -> ɫ
          (11363, 11363, 1, -3814), -- Ᵽ -> ᵽ
          (11364, 11364, 1, -10727), -- Ɽ -> ɽ
          (11367, 11371, 2, 1), -- Ⱨ..Ⱬ every 2
          (11373, 11373, 1, -10780), -- Ɑ -> ɑ
          (11374, 11374, 1, -10749), -- Ɱ -> ɱ
          (11375, 11375, 1, -10783), -- Ɐ -> ɐ
          (11376, 11376, 1, -10782), -- Ɒ -> ɒ
          (11378, 11378, 1, 1), -- Ⱳ -> ⱳ
          (11381, 11381, 1, 1), -- Ⱶ -> ⱶ
          (11390, 11391, 1, -10815), -- Ȿ..Ɀ
          (11392, 11490, 2, 1), -- Ⲁ..Ⳣ every 2
          (11499, 11501, 2, 1), -- Ⳬ..Ⳮ every 2
          (11506, 11506, 1, 1), -- Ⳳ -> ⳳ
          (42560, 42604, 2, 1), -- Ꙁ..Ꙭ every 2
          (42624, 42650, 2, 1), -- Ꚁ..Ꚛ every 2
          (42786, 42798, 2, 1), -- Ꜣ..Ꜯ every 2
          (42802, 42862, 2, 1), -- Ꜳ..Ꝯ every 2
          (42873, 42875, 2, 1), -- Ꝺ..Ꝼ every 2
          (42877, 42877, 1, -35332), -- Ᵹ -> ᵹ
          (42878, 42886, 2, 1), -- Ꝿ..Ꞇ every 2
          (42891, 42891, 1, 1), -- Ꞌ -> ꞌ
          (42893, 42893, 1, -42280), -- Ɥ -> ɥ
          (42896, 42898, 2, 1), -- Ꞑ..Ꞓ every 2
          (42902, 42920, 2, 1), -- Ꞗ..Ꞩ every 2
          (42922, 42922, 1, -42308), -- Ɦ -> ɦ
          (42923, 42923, 1, -42319), -- Ɜ -> ɜ
          (42924, 42924, 1, -42315), -- Ɡ -> ɡ
          (42925, 42925, 1, -42305), -- Ɬ -> ɬ
          (42926, 42926, 1, -42308), -- Ɪ -> ɪ
          (42928, 42928, 1, -42258), -- Ʞ -> ʞ
          (42929, 42929, 1, -42282), -- Ʇ -> ʇ
          (42930, 42930, 1, -42261), -- Ʝ -> ʝ
          (42931, 42931, 1, 928), -- Ꭓ -> ꭓ
          (42932, 42946, 2, 1), -- Ꞵ..Ꟃ every 2
          (42948, 42948, 1, -48), -- Ꞔ -> ꞔ
          (42949, 42949, 1, -42307), -- Ʂ -> ʂ
          (42950, 42950, 1, -35384), -- Ᶎ -> ᶎ
          (42951, 42953, 2, 1), -- Ꟈ..Ꟊ every 2
          (42955, 42955, 1, -42343), -- Ɤ -> ɤ
          (42956, 42970, 2, 1), -- Ꟍ..Ꟛ every 2
          (42972, 42972, 1, -42561), -- Ƛ -> ƛ
          (42997, 42997, 1, 1), -- Ꟶ -> ꟶ
          (43888, 43967, 1, -38864), -- ꭰ..ꮿ
          (66560, 66599, 1, 40), -- 𐐀..𐐧
          (66736, 66771, 1, 40), -- 𐒰..𐓓
          (66928, 66938, 1, 39), -- 𐕰..𐕺
          (66940, 66954, 1, 39), -- 𐕼..𐖊
          (66956, 66962, 1, 39), -- 𐖌..𐖒
          (66964, 66965, 1, 39), -- 𐖔..𐖕
          (68736, 68786, 1, 64), -- 𐲀..𐲲
          (68944, 68965, 1, 32), -- 𐵐..𐵥
          (71840, 71871, 1, 32), -- 𑢠..𑢿
          (93760, 93791, 1, 32), -- 𖹀..𖹟
          (93856, 93880, 1, 27), -- 𖺠..𖺸
          (125184, 125217, 1, 34) -- 𞤀..𞤡
       ) as r (first, last, step, delta),
       generate_series(r.first, r.last, r.step) as g;
-- the characters that fold to more than one
insert into case_folding_0013 (code_point, folded) values
  (223, 'ss'), -- ß
  (304, U&'i\0307'), -- İ
  (7838, 'ss'), -- ẞ
  (8064, U&'\1f00\03b9'), -- ᾀ
  (8065, U&'\1f01\03b9'), -- ᾁ
  (8066, U&'\1f02\03b9'), -- ᾂ
  (8067, U&'\1f03\03b9'), -- ᾃ
  (8068, U&'\1f04\03b9'), -- ᾄ
  (8069, U&'\1f05\03b9'), -- ᾅ
  (8070, U&'\1f06\03b9'), -- ᾆ
  (8071, U&'\1f07\03b9'), -- ᾇ
  (8072, U&'\1f00\03b9'), -- ᾈ
  (8073, U&'\1f01\03b9'), -- ᾉ
  (8074, U&'\1f02\03b9'), -- ᾊ
  (8075, U&'\1f03\03b9'), -- ᾋ
  (8076, U&'\1f04\03b9'), -- ᾌ
  (8077, U&'\1f05\03b9'), -- ᾍ
  (8078, U&'\1f06\03b9'), -- ᾎ
  (8079, U&'\1f07\03b9'), -- ᾏ
  (8080, U&'\1f20\03b9'), -- ᾐ
  (8081, U&'\1f21\03b9'), -- ᾑ
  (8082, U&'\1f22\03b9'), -- ᾒ
  (8083, U&'\1f23\03b9'), -- ᾓ
  (8084, U&'\1f24\03b9'), -- ᾔ
  (8085, U&'\1f25\03b9'), -- ᾕ
  (8086, U&'\1f26\03b9'), -- ᾖ
  (8087, U&'\1f27\03b9'), -- ᾗ
  (8088, U&'\1f20\03b9'), -- ᾘ
  (8089, U&'\1f21\03b9'), -- ᾙ
  (8090, U&'\1f22\03b9'), -- ᾚ
  (8091, U&'\1f23\03b9'), -- ᾛ
  (8092, U&'\1f24\03b9'), -- ᾜ
  (8093, U&'\1f25\03b9'), -- ᾝ
  (8094, U&'\1f26\03b9'), -- ᾞ
  (8095, U&'\1f27\03b9'), -- ᾟ
  (8096, U&'\1f60\03b9'), -- ᾠ
  (8097, U&'\1f61\03b9'), -- ᾡ
  (8098, U&'\1f62\03b9'), -- ᾢ
  (8099, U&'\1f63\03b9'), -- ᾣ
  (8100, U&'\1f64\03b9'), -- ᾤ
  (8101, U&'\1f65\03b9'), -- ᾥ
  (8102, U&'\1f66\03b9'), -- ᾦ
  (8103, U&'\1f67\03b9'), -- ᾧ
  (8104, U&'\1f60\03b9'), -- ᾨ
  (8105, U&'\1f61\03b9'), -- ᾩ
  (8106, U&'\1f62\03b9'), -- ᾪ
  (8107, U&'\1f63\03b9'), -- ᾫ
  (8108, U&'\1f64\03b9'), -- ᾬ
  (8109, U&'\1f65\03b9'), -- ᾭ
  (8110, U&'\1f66\03b9'), -- ᾮ
  (8111, U&'\1f67\03b9'), -- ᾯ
  (8114, U&'\1f70\03b9'), -- ᾲ
  (8115, U&'\03b1\03b9'), -- ᾳ
  (8116, U&'\03ac\03b9'), -- ᾴ
  (8119, U&'\1fb6\03b9'), -- ᾷ
  (8124, U&'\03b1\03b9'), -- ᾼ
  (8130, U&'\1f74\03b9'), -- ῂ
  (8131, U&'\03b7\03b9'), -- ῃ
  (8132, U&'\03ae\03b9'), -- ῄ
  (8135, U&'\1fc6\03b9'), -- ῇ
  (8140, U&'\03b7\03b9'), -- ῌ
  (8178, U&'\1f7c\03b9'), -- ῲ
  (8179, U&'\03c9\03b9'), -- ῳ
  (8180, U&'\03ce\03b9'), -- ῴ
  (8183, U&'\1ff6\03b9'), -- ῷ
  (8188, U&'\03c9\03b9') -- ῼ
;
create function pg_temp.fold_case_0013(name text) returns text language sql stable as $$
  select normalize(coalesce(string_agg(coalesce(f.folded, c.ch), '' order by c.at), ''), NFKC)
    from regexp_split_to_table(normalize(name, NFKC), '') with ordinality as c (ch, at)
    left join case_folding_0013 f on f.code_point = ascii(c.ch)
$$;
-- fold: end
alter table tags add column name_key text null;
-- backfill: begin
update tags set name_key = pg_temp.fold_case_0013(name);

-- Tags that lower() told apart and foldCase does not (straße and STRASSE, Ａ and a) become one: the oldest, whose
-- spelling is the one the note saw first. An issue that had several of them keeps one, where it had the first.
create temporary table tags_merged_0013 as
select t.id as from_id, k.keep_id
  from tags t
  join (select note_id, name_key, min(id) as keep_id from tags group by note_id, name_key having count(*) > 1) k
    on k.note_id = t.note_id and k.name_key = t.name_key
 where t.id <> k.keep_id;
with spelled as (
  select it.issue_id, it.tag_id,
         row_number() over (partition by it.issue_id, coalesce(m.keep_id, it.tag_id) order by it.added_order) as place
    from issue_tags it
    left join tags_merged_0013 m on m.from_id = it.tag_id
   where it.tag_id in (select from_id from tags_merged_0013 union select keep_id from tags_merged_0013)
)
delete from issue_tags it using spelled s where it.issue_id = s.issue_id and it.tag_id = s.tag_id and s.place > 1;
update issue_tags it set tag_id = m.keep_id from tags_merged_0013 m where it.tag_id = m.from_id;
delete from tags t using tags_merged_0013 m where t.id = m.from_id;
-- backfill: end

alter table tags alter column name_key set not null;
drop index tags_note_name_unique;
create unique index tags_note_name_key_unique on tags (note_id, name_key);
drop function pg_temp.fold_case_0013(text);
drop table case_folding_0013, tags_merged_0013;

-- 3. Search compares foldCase too (src/modules/search/text.ts): the normalized text and tokens of the index were
-- made by the rule before (NFKC and lower case only), so the index is emptied, and the server rebuilds it from the
-- notes, pages, issues and comments at its next start, before it listens (reindexIfEmpty, as after migration 0008).
truncate search_documents;
