/*
 * l_template.h: replacement templates for ge.rewrite (l_template.c).
 */
#ifndef LGE_TEMPLATE_H
#define LGE_TEMPLATE_H

#include <lua.h>

#include "match/match.h"
#include "match/template.h"

/* [-0, +1, e] Builds the template described by the spec table at spec
 * for pattern p, and pushes the userdata owning it (the template lives as
 * long as that value).  rule names it in messages unless the spec has a
 * name.  Raises one line naming the entry of a bad spec. */
ge_tmpl *lge_buildtemplate(lua_State *L, int spec, const ge_pat *p,
			   const char *rule);
/* [-0, +0, e] The template at idx (made by m.template), or NULL. */
ge_tmpl *lge_testtemplate(lua_State *L, int idx);
/* m.template(pattern, spec) */
int lge_m_template(lua_State *L);
/* The pattern userdata at idx as m.op & co. accept it (l_match.c). */
ge_pat *lge_checkpattern(lua_State *L, int idx);
void lge_open_template(lua_State *L);

#endif
