# One optional dependency (a bench baseline, ONNX import), chosen at
# configure time: its sources when found, else stand-ins that say what is
# missing. cmake/baselines.cmake and cmake/models.cmake declare theirs with it.
include_guard(GLOBAL)

# ct_optional_dependency(GROUP <group> LABEL <text> HAVE <var> LIST <sources var>
#   WHEN <condition, as for if()> SHOW <var> INSTALL <Debian packages>
#   SOURCES <files> MISSING <files> [INCLUDES <dirs>] [LIBS <libs>] [DEFINES <defs>])
# When WHEN holds: says "<LABEL>: <SHOW's value>", appends SOURCES to the
# list LIST, sets HAVE ON and keeps INCLUDES, LIBS and DEFINES for
# ct_use_optional(<target> <group>). Otherwise says "<LABEL>: not found
# (apt-get install <INSTALL>)", appends MISSING and sets HAVE OFF.
function(ct_optional_dependency)
  cmake_parse_arguments(PARSE_ARGV 0 D "" "GROUP;LABEL;HAVE;LIST;SHOW"
                        "WHEN;INSTALL;SOURCES;MISSING;INCLUDES;LIBS;DEFINES")
  if(${D_WHEN})
    message(STATUS "${D_LABEL}: ${${D_SHOW}}")
    set(${D_LIST} ${${D_LIST}} ${D_SOURCES} PARENT_SCOPE)
    set(${D_HAVE} ON PARENT_SCOPE)
    set(CT_${D_GROUP}_FOUND ${CT_${D_GROUP}_FOUND} ${D_HAVE} PARENT_SCOPE)
    set(${D_HAVE}_INCLUDES ${D_INCLUDES} PARENT_SCOPE)
    set(${D_HAVE}_LIBS ${D_LIBS} PARENT_SCOPE)
    set(${D_HAVE}_DEFINES ${D_DEFINES} PARENT_SCOPE)
  else()
    string(JOIN " " install ${D_INSTALL})
    message(STATUS "${D_LABEL}: not found (apt-get install ${install})")
    set(${D_LIST} ${${D_LIST}} ${D_MISSING} PARENT_SCOPE)
    set(${D_HAVE} OFF PARENT_SCOPE)
  endif()
endfunction()

# Links the found dependencies of `group` into `target`, in the order they
# were declared: their include directories and libraries for it, their
# definitions (CONVTUNE_HAVE_...=1) for it and its users.
function(ct_use_optional target group)
  foreach(have IN LISTS CT_${group}_FOUND)
    if(${have}_INCLUDES)
      target_include_directories(${target} PRIVATE ${${have}_INCLUDES})
    endif()
    if(${have}_LIBS)
      target_link_libraries(${target} PRIVATE ${${have}_LIBS})
    endif()
    if(${have}_DEFINES)
      target_compile_definitions(${target} PUBLIC ${${have}_DEFINES})
    endif()
  endforeach()
endfunction()
